"""`python -m hudi_engine.config [README.md]`: print the option tables of the README's "Configuration" section, or
rewrite them in place between the README's `<!-- options:begin -->` / `<!-- options:end -->` markers."""
import re
import sys
from pathlib import Path

from hudi_engine.config import options_markdown

if len(sys.argv) > 1:
    readme = Path(sys.argv[1])
    text = readme.read_text()
    new = re.sub(r"(<!-- options:begin -->\n).*?(<!-- options:end -->)", lambda m: m.group(1) + options_markdown()
                 + m.group(2), text, flags=re.S)
    readme.write_text(new)
else:
    print(options_markdown(), end="")
