import tempfile
import unittest
from pathlib import Path

from kvstore import open_store


class JsonBasicTest(unittest.TestCase):
    def test_values_survive_reopening(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "data.json"
            store = open_store(f"json://{path}")
            store.set("answer", 42)
            self.assertEqual(open_store(f"json://{path}").get("answer"), 42)
