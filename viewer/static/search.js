// convtrace viewer: script of the search page; does nothing elsewhere.
// Changing the project or role of a search runs it again; without the
// script the Search button does.
"use strict";
(() => {
  const form = document.getElementById("search-form");
  if (!form) {
    return;
  }
  for (const sel of form.querySelectorAll("select")) {
    sel.addEventListener("change", () => {
      if (form.elements.q.value.trim() !== "") {
        form.requestSubmit();
      }
    });
  }
})();
