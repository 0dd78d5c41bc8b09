"""Real Apache Hudi (Java) as the test oracle: env.py prepares each pinned release, server.py is the oracle process,
client.py drives it, compare.py compares its answers with the engine's."""
