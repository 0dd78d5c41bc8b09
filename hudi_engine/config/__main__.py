"""`python -m hudi_engine.config`: print the option tables of the README's "Configuration" section."""
from hudi_engine.config import options_markdown

print(options_markdown(), end="")
