package viewer

// LatencyText is latencyText, for the latency page's browser test, which
// reads the page as a user does.
var LatencyText = latencyText
