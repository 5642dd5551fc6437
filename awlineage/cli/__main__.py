"""``python -m awlineage.cli``: the same as ``awl``."""

import sys

from awlineage.cli import main

sys.exit(main())
