// convtrace viewer: what every page's script shares. Served as a file
// because the Content-Security-Policy allows no inline script. Each page's
// own script (threads.js, thread.js, trace.js, search.js, cost.js) is
// loaded on every page and does nothing where its elements are absent.
"use strict";
window.convtrace = {
  // send makes a same-origin JSON request that changes something and
  // returns the decoded answer; it throws an Error carrying the server's
  // reason when the status is not 2xx.
  async send(method, url, body) {
    const res = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (_) {
      data = null;
    }
    if (!res.ok) {
      throw new Error((data && data.error) || `${method} ${url}: HTTP ${res.status}`);
    }
    return data;
  },
  // getJSON fetches url and decodes it, throwing on a non-2xx status.
  async getJSON(url) {
    const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      throw new Error((data && data.error) || `GET ${url}: HTTP ${res.status}`);
    }
    return data;
  },
};
