"""`python -m flows.cli …` is `aui …`."""

from .._entry import main

main()
