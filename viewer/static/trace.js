// convtrace viewer: script of the trace page; does nothing elsewhere.
// Every span is a link to ?span=ID, which the server renders with the
// span's detail beside the waterfall; with scripts on, detail.js opens it
// in place instead. Here: a page opened on one span shows its row.
"use strict";
(() => {
  const waterfall = document.getElementById("waterfall");
  if (!waterfall) {
    return;
  }
  const selected = waterfall.querySelector('a.wf-row[aria-current="true"]');
  if (selected && !location.hash) {
    selected.scrollIntoView({ block: "center" });
  }
})();
