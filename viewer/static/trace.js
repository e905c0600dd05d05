// convtrace viewer: script of the trace page; does nothing elsewhere.
// Without it every span is a link to ?span=ID, which the server renders;
// with it a click fetches the span's turns and shows them in place.
"use strict";
(() => {
  const waterfall = document.getElementById("waterfall");
  const panel = document.getElementById("span-turns");
  if (!waterfall || !panel) {
    return;
  }
  const traceID = waterfall.dataset.trace;

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const clock = (ns) => new Date(Number(BigInt(ns) / 1000000n)).toISOString().slice(11, 23);

  // renderTurn builds a turn card from the API's JSON with textContent only:
  // model output never becomes HTML.
  const renderTurn = (t) => {
    const card = el("article", "span-turn" + (t.role === "error" ? " turn-error" : ""));
    card.dataset.turn = t.turn_id;
    const head = el("header");
    head.append(el("span", "badge speaker", t.speaker || "—"));
    if (t.phase) head.append(el("span", "pill phase", t.phase));
    if (t.model) head.append(el("span", "badge model", t.model));
    head.append(el("span", "role", t.role));
    if (t.tool_name) head.append(el("span", "tool", t.tool_name));
    head.append(el("span", "at", clock(t.start_ns)));
    const open = el("a", "open-turn", "open in thread");
    open.href = t.url;
    head.append(open);
    card.append(head);
    if (t.error) card.append(el("p", "error-msg", t.error));
    const content = el("div", "turn-content");
    if (t.messages && t.messages.length) {
      for (const m of t.messages) {
        const msg = el("div", "msg");
        msg.append(el("span", "msg-role", m.role), el("pre", "", m.text));
        content.append(msg);
      }
    } else {
      content.append(el("pre", "", t.content));
    }
    card.append(content);
    if (t.content_cut) {
      const note = el("p", "note", `Cut here; the turn has ${t.content_bytes} bytes. `);
      const all = el("a", "", "Read it all in its thread.");
      all.href = t.url;
      note.append(all);
      card.append(note);
    }
    return card;
  };

  const show = async (row) => {
    const spanID = row.dataset.span;
    const name = row.querySelector(".span-name");
    panel.replaceChildren(el("p", "empty", "Loading…"));
    try {
      const data = await convtrace.getJSON(
        `/api/traces/${encodeURIComponent(traceID)}/spans/${encodeURIComponent(spanID)}/turns`);
      const h = el("h2", "", "Turns of ");
      h.append(el("span", "span-name", name ? name.textContent : spanID));
      const cards = data.turns.map(renderTurn);
      panel.replaceChildren(h, ...(cards.length ? cards : [el("p", "empty", "This span recorded no turns.")]));
    } catch (err) {
      panel.replaceChildren(el("p", "error-msg", err.message));
    }
    for (const r of waterfall.querySelectorAll("a.wf-row.selected")) r.classList.remove("selected");
    row.classList.add("selected");
    const url = new URL(location.href);
    url.searchParams.set("span", spanID);
    url.hash = "span-turns";
    history.replaceState(null, "", url);
    panel.scrollIntoView({ block: "nearest" });
  };

  // A link to one span (the thread page's) shows it and its turns.
  const selected = waterfall.querySelector("a.wf-row.selected");
  if (selected && !location.hash) {
    selected.scrollIntoView({ block: "center" });
  }

  waterfall.addEventListener("click", (ev) => {
    const row = ev.target.closest("a.wf-row[data-span]");
    if (!row || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) {
      return;
    }
    ev.preventDefault();
    show(row);
  });
})();
