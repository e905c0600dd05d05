// convtrace viewer: script of the thread page; does nothing elsewhere.
// The page works without it (the filter bar is a GET form, the views are
// links); the script adds what needs a request: star, memo, copy as
// markdown, loading a long turn whole; and folding cards.
"use strict";
(() => {
  const filters = document.querySelector("form.thread-filters");
  if (!filters) {
    return;
  }
  const thread = filters.dataset.thread;
  const turnURL = (turn) =>
    `/api/threads/${encodeURIComponent(thread)}/turns/${encodeURIComponent(turn)}`;

  // Chips and menus apply at once; text fields on Enter or Apply.
  filters.addEventListener("change", (event) => {
    if (event.target.matches("input[type=checkbox], select")) {
      filters.requestSubmit();
    }
  });

  // A phase chip clicked alone shows only its phase; with shift, ctrl or
  // ⌘ it is added to, or taken from, the phases shown.
  const chips = [...filters.querySelectorAll(".chips input[name=phase]")];
  for (const chip of chips) {
    chip.addEventListener("click", (event) => {
      if (!(event.shiftKey || event.ctrlKey || event.metaKey)) {
        for (const other of chips) {
          other.checked = other === chip;
        }
      }
    });
  }

  // The URL carries only the filters in use: no empty field, and no phase
  // when every phase is shown.
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(filters);
    const everyPhase = data.getAll("phase").length === chips.length;
    const params = new URLSearchParams();
    for (const [name, value] of data) {
      if (value !== "" && !(name === "phase" && everyPhase)) {
        params.append(name, value);
      }
    }
    const query = params.toString();
    window.location.assign(filters.action + (query ? "?" + query : ""));
  });

  // flash shows a short status next to the button that caused it.
  function flash(el, text) {
    if (!el) {
      return;
    }
    el.textContent = text;
    clearTimeout(el.flashTimer);
    el.flashTimer = setTimeout(() => { el.textContent = ""; }, 3000);
  }

  async function copy(url, status) {
    try {
      await navigator.clipboard.writeText(await convtrace.getText(url));
      flash(status, "Copied");
    } catch (err) {
      flash(status, `Copy failed: ${err.message}`);
    }
  }

  // loadFull puts the whole turn, every message and nothing cut, in place
  // of the start its card shows; the tool runs nested under its tool
  // calls move along.
  async function loadFull(button, article) {
    const content = document.getElementById(button.getAttribute("aria-controls"));
    button.disabled = true;
    try {
      const q = new URLSearchParams(window.location.search).get("q");
      const url = `/threads/${encodeURIComponent(thread)}/turns/${encodeURIComponent(article.dataset.turn)}/full` +
        (q ? `?q=${encodeURIComponent(q)}` : "");
      const html = await convtrace.getText(url);
      const runs = new Map([...content.querySelectorAll(".tool-run")].map((r) => [r.dataset.toolCall, r]));
      const full = document.createElement("template");
      full.innerHTML = html;
      for (const call of full.content.querySelectorAll(".tool-call")) {
        const run = runs.get(call.dataset.toolCall);
        if (run) {
          call.append(run);
        }
      }
      content.replaceChildren(full.content);
      for (const other of article.querySelectorAll(`button.load-full[aria-controls="${content.id}"]`)) {
        other.remove();
      }
    } catch (err) {
      button.disabled = false;
      button.textContent = `Load failed: ${err.message}`;
    }
  }

  // fold shows a card as its header line only, or whole again.
  function fold(card, folded) {
    card.classList.toggle("folded", folded);
    const button = card.querySelector(".call-head button.fold");
    if (button) {
      button.setAttribute("aria-expanded", String(!folded));
      button.textContent = folded ? "▸" : "▾";
    }
  }

  async function star(button, article) {
    const starred = button.getAttribute("aria-pressed") !== "true";
    button.disabled = true;
    try {
      const note = await convtrace.send("PUT", `${turnURL(article.dataset.turn)}/note`, { starred });
      button.setAttribute("aria-pressed", String(note.starred));
      button.textContent = note.starred ? "★" : "☆";
      article.classList.toggle("turn-starred", note.starred);
    } catch (err) {
      flash(article.querySelector(".turn-tools .copied"), err.message);
    } finally {
      button.disabled = false;
    }
  }

  // memoEditor opens (or closes) the memo editor of a turn: made on
  // demand, so that a page of a thousand turns carries none.
  function memoEditor(article) {
    let box = article.querySelector(":scope > .memo-box");
    if (!box) {
      box = document.createElement("div");
      box.className = "memo-box";
      article.append(box);
    }
    let editor = box.querySelector(".memo-edit");
    if (editor) {
      editor.hidden = !editor.hidden;
      return;
    }
    editor = document.createElement("div");
    editor.className = "memo-edit";
    const text = document.createElement("textarea");
    text.className = "memo-text";
    text.rows = 3;
    text.setAttribute("aria-label", "Memo");
    const shown = box.querySelector("p.memo");
    text.value = shown ? shown.textContent : "";
    const save = document.createElement("button");
    save.type = "button";
    save.className = "save-memo";
    save.textContent = "Save memo";
    const status = document.createElement("span");
    status.className = "memo-status";
    status.setAttribute("role", "status");
    editor.append(text, save, " ", status);
    box.append(editor);
    text.focus();
  }

  // comparePairs lists under a card the calls it is natural to compare it
  // with, read when first asked for.
  async function comparePairs(button) {
    const card = button.closest("article.call");
    let list = card.querySelector(":scope > .compare-pairs");
    if (list) {
      list.hidden = !list.hidden;
      button.setAttribute("aria-expanded", String(!list.hidden));
      return;
    }
    list = document.createElement("ul");
    list.className = "compare-pairs";
    card.querySelector(".call-head").after(list);
    button.setAttribute("aria-expanded", "true");
    try {
      const res = await convtrace.getJSON(
        `/api/threads/${encodeURIComponent(thread)}/compare/pairs?call=${encodeURIComponent(button.dataset.call)}`);
      for (const pair of res.pairs) {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = pair.url;
        link.textContent = pair.label;
        item.append(link);
        list.append(item);
      }
      if (res.pairs.length === 0) {
        list.textContent = "No natural partner: pick any two calls on the compare page.";
      }
    } catch (err) {
      list.textContent = `Compare: ${err.message}`;
    }
  }

  async function saveMemo(button, article) {
    const box = article.querySelector(":scope > .memo-box");
    const status = box.querySelector(".memo-status");
    const memo = box.querySelector("textarea.memo-text").value;
    button.disabled = true;
    try {
      const note = await convtrace.send("PUT", `${turnURL(article.dataset.turn)}/note`, { memo });
      let shown = box.querySelector("p.memo");
      if (!shown) {
        shown = document.createElement("p");
        shown.className = "memo";
        box.prepend(shown);
      }
      shown.textContent = note.memo;
      shown.hidden = note.memo === "";
      flash(status, "Saved");
    } catch (err) {
      flash(status, err.message);
    } finally {
      button.disabled = false;
    }
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) {
      return;
    }
    const article = button.closest("article.turn");
    if (button.matches(".fold")) {
      fold(button.closest("article.call"), button.getAttribute("aria-expanded") === "true");
    } else if (button.matches(".expand-all, .collapse-all")) {
      for (const card of document.querySelectorAll("article.call")) {
        fold(card, button.matches(".collapse-all"));
      }
    } else if (button.matches(".copy-thread")) {
      copy(button.dataset.url, button.parentElement.querySelector(".copied"));
    } else if (article && button.matches(".copy-turn")) {
      copy(`${turnURL(article.dataset.turn)}/markdown`, button.parentElement.querySelector(".copied"));
    } else if (article && button.matches(".load-full")) {
      loadFull(button, article);
    } else if (article && button.matches(".star")) {
      star(button, article);
    } else if (button.matches(".compare-open")) {
      comparePairs(button);
    } else if (article && button.matches(".memo-open")) {
      memoEditor(article);
    } else if (article && button.matches(".save-memo")) {
      saveMemo(button, article);
    }
  });
})();
