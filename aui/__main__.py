"""`python -m aui …` is `aui …`."""

from ._entry import main

main()
