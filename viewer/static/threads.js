// convtrace viewer: script of the threads page; does nothing elsewhere.
"use strict";
