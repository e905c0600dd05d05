// convtrace viewer: the change feed (GET /api/events), for the pages that
// follow threads as they change. convtrace.follow(thread, on, fallback)
// opens the feed (of one thread when thread is not empty) and calls
// on(type, data) for each event. The browser reconnects by itself after a
// dropped connection, sending Last-Event-ID, and gets what it missed (or
// reset). When there is no EventSource, or the feed is refused or not open
// within 5 s, it is closed and fallback is called once: the page polls.
"use strict";
(() => {
  const types = ["created", "updated", "renamed", "archived", "deleted", "session", "reset"];
  window.convtrace.follow = (thread, on, fallback) => {
    let source = null;
    let failed = false;
    const fail = () => {
      if (failed) {
        return;
      }
      failed = true;
      if (source) {
        source.close();
      }
      document.documentElement.dataset.feed = "failed";
      fallback();
    };
    if (!window.EventSource || window.convtrace.noFeed) {
      fail();
      return;
    }
    source = new EventSource("/api/events" + (thread ? "?thread=" + encodeURIComponent(thread) : ""));
    const timer = window.setTimeout(fail, 5000);
    source.addEventListener("open", () => {
      window.clearTimeout(timer);
      document.documentElement.dataset.feed = "open";
    });
    // A refused stream (an HTTP error) closes the source; a dropped one
    // reconnects.
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) {
        window.clearTimeout(timer);
        fail();
      }
    });
    for (const type of types) {
      source.addEventListener(type, (e) => on(type, JSON.parse(e.data)));
    }
  };
})();
