import pytest

from ringq.buffer import RingBuffer


def test_append_overwrites_oldest_when_full():
    buffer = RingBuffer(3)
    assert buffer.append("a") is None
    buffer.extend(["b", "c"])
    assert buffer.append("d") == "a"
    assert list(buffer) == ["b", "c", "d"]
    assert (buffer.oldest(), buffer.newest(), len(buffer)) == ("b", "d", 3)


def test_capacity_must_be_a_positive_int():
    with pytest.raises(ValueError):
        RingBuffer(0)
    with pytest.raises(TypeError):
        RingBuffer(2.5)


def test_empty_buffer_has_no_oldest_item():
    buffer = RingBuffer(2)
    buffer.extend([1, 2])
    buffer.clear()
    with pytest.raises(IndexError):
        buffer.oldest()
    assert buffer.capacity == 2
