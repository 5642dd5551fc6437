// The viewer's own script: small progressive enhancements; every page works without it.
"use strict";
