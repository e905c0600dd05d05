// convtrace viewer: script of the search page; does nothing elsewhere.
// Changing a menu or the starred box of a search runs it again (without
// the script the Search button does), and a search's URL carries only the
// fields in use.
"use strict";
(() => {
  const form = document.getElementById("search-form");
  if (!form) {
    return;
  }
  for (const field of form.querySelectorAll("select, input[type=checkbox]")) {
    field.addEventListener("change", () => form.requestSubmit());
  }
  form.addEventListener("formdata", (e) => {
    for (const [name, value] of [...e.formData]) {
      if (value === "") {
        e.formData.delete(name);
      }
    }
  });
})();
