import json
import tempfile
import unittest
from pathlib import Path

import kvstore
from kvstore import MissingKeyError, StoreError, available_backends, open_store


class JsonFileBackendTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)
        self.path = self.dir / "store.json"
        from kvstore.jsonfile import JsonFileBackend

        self.backend_class = JsonFileBackend

    def test_backend_is_a_backend(self):
        store = self.backend_class(self.path)
        self.assertIsInstance(store, kvstore.Backend)
        self.assertEqual(store.path, self.path)
        self.assertEqual(self.backend_class(str(self.path)).path, self.path)

    def test_file_not_created_until_first_write(self):
        store = self.backend_class(self.path)
        self.assertEqual(store.keys(), [])
        self.assertFalse(self.path.exists())
        store.set("k", "v")
        self.assertTrue(self.path.exists())

    def test_file_holds_a_json_object_with_every_value(self):
        store = self.backend_class(self.path)
        store.set("b", [1, 2])
        store.set("a", {"nested": True})
        self.assertEqual(
            json.loads(self.path.read_text()), {"a": {"nested": True}, "b": [1, 2]}
        )
        self.assertEqual(self.backend_class(self.path).items(), [("a", {"nested": True}), ("b", [1, 2])])

    def test_delete_is_persisted(self):
        store = self.backend_class(self.path)
        store.set("a", 1)
        store.set("b", 2)
        store.delete("a")
        self.assertEqual(self.backend_class(self.path).keys(), ["b"])

    def test_missing_keys(self):
        store = self.backend_class(self.path)
        self.assertEqual(store.get("nope", "dflt"), "dflt")
        with self.assertRaises(MissingKeyError):
            store.get("nope")
        with self.assertRaises(MissingKeyError):
            store.delete("nope")

    def test_unserialisable_value_changes_nothing(self):
        store = self.backend_class(self.path)
        store.set("a", 1)
        before = self.path.read_text()
        with self.assertRaises(TypeError):
            store.set("bad", {1, 2})
        self.assertNotIn("bad", store)
        self.assertEqual(self.path.read_text(), before)

    def test_no_temporary_file_left_behind(self):
        store = self.backend_class(self.path)
        store.set("a", 1)
        store.delete("a")
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["store.json"])

    def test_corrupt_files_raise_corrupt_store_error(self):
        from kvstore.errors import CorruptStoreError

        self.assertTrue(issubclass(CorruptStoreError, StoreError))
        self.path.write_text("{not json")
        with self.assertRaises(CorruptStoreError):
            self.backend_class(self.path)
        self.path.write_text("[1, 2, 3]")
        with self.assertRaises(CorruptStoreError):
            self.backend_class(self.path)


class JsonRegistrationTest(unittest.TestCase):
    def test_json_scheme_is_registered(self):
        self.assertEqual(available_backends(), ["json", "memory"])

    def test_open_store_absolute_url(self):
        from kvstore.jsonfile import JsonFileBackend

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "s.json"
            store = open_store("json://" + path.as_posix())
            self.assertIsInstance(store, JsonFileBackend)
            self.assertEqual(store.path, path)

    def test_open_store_without_path_is_rejected(self):
        with self.assertRaises(ValueError):
            open_store("json://")

    def test_package_exports(self):
        from kvstore.errors import CorruptStoreError
        from kvstore.jsonfile import JsonFileBackend

        self.assertIs(kvstore.JsonFileBackend, JsonFileBackend)
        self.assertIs(kvstore.CorruptStoreError, CorruptStoreError)
