"""Reading JavaScript and CSS source without running it: literals and comments masked, brackets matched.

    masked = mask(code)                       # same length; comments and the insides of literals are spaces
    end = closing(masked, masked.index("{"))  # the brace that closes the first one, or -1
    for k, token, depth in scan(masked, ";"):  # each bracket and each `;`, with the depth after it
        ...

Not a parser: good enough to find statements, function bodies, rule blocks and top-level operators
without being fooled by `'{'`, `// }` or `/[)]/`. The verifier's static reading of checkers and
scripts and the offline coder's CSS rewriting share it.
"""

from ._scan import closing, mask, scan

__all__ = ["closing", "mask", "scan"]
