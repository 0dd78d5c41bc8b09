"""hudi_engine: reads and writes Apache Hudi tables (table version 6, timeline layout 1) from Python and Spark."""
from hudi_engine.errors import HudiError
from hudi_engine.table import HudiTable

__all__ = ["HudiError", "HudiTable"]
__version__ = "0.1.0"
