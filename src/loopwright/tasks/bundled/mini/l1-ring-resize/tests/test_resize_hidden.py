import pytest

from ringq.buffer import RingBuffer


def wrapped_buffer():
    """A full buffer of capacity 4 whose oldest item is not in the first slot."""
    buffer = RingBuffer(4)
    buffer.extend(["a", "b", "c", "d", "e", "f"])
    assert list(buffer) == ["c", "d", "e", "f"]
    return buffer


class TestResize:
    def test_growing_keeps_every_item_in_order(self):
        buffer = wrapped_buffer()
        assert buffer.resize(6) == []
        assert list(buffer) == ["c", "d", "e", "f"]
        assert (buffer.capacity, len(buffer), buffer.is_full) == (6, 4, False)

    def test_growing_makes_room_before_overwriting(self):
        buffer = wrapped_buffer()
        buffer.resize(6)
        assert buffer.append("g") is None
        assert buffer.append("h") is None
        assert buffer.append("i") == "c"
        assert list(buffer) == ["d", "e", "f", "g", "h", "i"]

    def test_shrinking_keeps_the_newest_items(self):
        buffer = wrapped_buffer()
        buffer.resize(2)
        assert list(buffer) == ["e", "f"]
        assert (buffer.capacity, buffer.oldest(), buffer.newest()) == (2, "e", "f")

    def test_shrinking_returns_dropped_items_oldest_first(self):
        buffer = wrapped_buffer()
        assert buffer.resize(1) == ["c", "d", "e"]
        assert list(buffer) == ["f"]

    def test_shrinking_to_the_current_length_drops_nothing(self):
        buffer = RingBuffer(5)
        buffer.extend([1, 2, 3])
        assert buffer.resize(3) == []
        assert list(buffer) == [1, 2, 3]
        assert buffer.is_full

    def test_appending_after_shrinking_wraps_correctly(self):
        buffer = wrapped_buffer()
        buffer.resize(3)
        assert buffer.append("g") == "d"
        assert buffer.append("h") == "e"
        assert list(buffer) == ["f", "g", "h"]
        assert buffer.newest() == "h"

    def test_same_capacity_is_a_no_op(self):
        buffer = wrapped_buffer()
        assert buffer.resize(4) == []
        assert list(buffer) == ["c", "d", "e", "f"]
        assert buffer.append("g") == "c"

    def test_resizing_an_empty_buffer(self):
        buffer = RingBuffer(3)
        assert buffer.resize(1) == []
        assert len(buffer) == 0
        buffer.extend([7, 8])
        assert list(buffer) == [8]

    def test_invalid_capacity_raises_and_leaves_buffer_unchanged(self):
        buffer = wrapped_buffer()
        for bad in (0, -3):
            with pytest.raises(ValueError):
                buffer.resize(bad)
        for bad in (2.0, "3", True):
            with pytest.raises(TypeError):
                buffer.resize(bad)
        assert list(buffer) == ["c", "d", "e", "f"]
        assert buffer.capacity == 4
