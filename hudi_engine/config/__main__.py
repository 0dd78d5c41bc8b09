"""`python -m hudi_engine.config [docs/configuration.md]`: print the option tables of the configuration reference, or
rewrite them in place between its `<!-- options:begin -->` / `<!-- options:end -->` markers.
`python -m hudi_engine.config --classification docs/options.md`: write the classification of every Hudi write option
(honoured, refused, accepted no-op; `hudi_keys.classification_markdown`)."""
import re
import sys
from pathlib import Path

from hudi_engine.config import options_markdown
from hudi_engine.config.hudi_keys import classification_markdown

if len(sys.argv) > 2 and sys.argv[1] == "--classification":
    Path(sys.argv[2]).write_text(classification_markdown())
elif len(sys.argv) > 1:
    target = Path(sys.argv[1])
    text = target.read_text()
    new = re.sub(r"(<!-- options:begin -->\n).*?(<!-- options:end -->)", lambda m: m.group(1) + options_markdown()
                 + m.group(2), text, flags=re.S)
    target.write_text(new)
else:
    print(options_markdown(), end="")
