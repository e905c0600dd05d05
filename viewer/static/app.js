// convtrace viewer: what every page's script shares. Served as a file
// because the Content-Security-Policy allows no inline script. Each page's
// own script (threads.js, thread.js, trace.js, search.js, cost.js) is
// loaded on every page and does nothing where its elements are absent.
"use strict";
window.convtrace = {
  // getText makes a same-origin request and returns the answer's text; it
  // throws an Error carrying the server's reason (the "error" of a JSON
  // answer) when the status is not 2xx. A body is sent as JSON.
  async getText(url, method = "GET", body = undefined) {
    const res = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let reason = "";
      try {
        reason = JSON.parse(text).error || "";
      } catch (_) {
        reason = text.trim();
      }
      throw new Error(reason || `${method} ${url}: HTTP ${res.status}`);
    }
    return text;
  },
  // send makes a same-origin JSON request that changes something and
  // returns the decoded answer.
  async send(method, url, body) {
    const text = await this.getText(url, method, body);
    return text ? JSON.parse(text) : null;
  },
  // getJSON fetches url and decodes it.
  async getJSON(url) {
    return this.send("GET", url);
  },
};
