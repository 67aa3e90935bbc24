import sys

from trainspec.console import main

sys.exit(main())
