// convtrace viewer: script of the search page; does nothing elsewhere.
"use strict";
