import os
import sys

# `python -m` puts the working folder first on sys.path. There, a folder named `trainspec` with no
# `__init__.py` (a clone of this repository seen from its parent folder) is found first as a namespace
# package and stands in for the installed one, which an editable install finds only after it. The
# installed package wins: forget the stand-in, and look again without the working folder.
_parent = sys.modules.get("trainspec")
if _parent is not None and getattr(_parent, "__file__", None) is None:
    del sys.modules["trainspec"]
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]

from trainspec.console import main  # noqa: E402

sys.exit(main())
