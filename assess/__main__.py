"""``python -m assess`` runs the iobound command line."""

import sys

from assess.cli import main

sys.exit(main())
