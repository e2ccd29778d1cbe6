import unittest

from kvstore import MissingKeyError, UnknownBackendError, available_backends, open_store


class MemoryStoreTest(unittest.TestCase):
    def setUp(self):
        self.store = open_store("memory://")

    def test_set_get_delete(self):
        self.store.set("b", 2)
        self.store.set("a", [1, "x"])
        self.assertEqual(self.store.get("a"), [1, "x"])
        self.assertEqual(self.store.keys(), ["a", "b"])
        self.store.delete("a")
        self.assertNotIn("a", self.store)
        self.assertEqual(len(self.store), 1)

    def test_missing_keys(self):
        self.assertIsNone(self.store.get("nope", None))
        with self.assertRaises(MissingKeyError):
            self.store.get("nope")
        with self.assertRaises(KeyError):
            self.store.delete("nope")

    def test_bad_keys_rejected(self):
        with self.assertRaises(TypeError):
            self.store.set("", 1)
        with self.assertRaises(TypeError):
            self.store.set(3, 1)


class RegistryTest(unittest.TestCase):
    def test_unknown_scheme(self):
        with self.assertRaises(UnknownBackendError):
            open_store("redis://localhost")

    def test_memory_is_registered(self):
        self.assertIn("memory", available_backends())
