from ringq.buffer import RingBuffer


def test_resize_grows_the_capacity():
    buffer = RingBuffer(2)
    buffer.extend([1, 2])
    assert buffer.resize(4) == []
    buffer.append(3)
    assert list(buffer) == [1, 2, 3]
    assert buffer.capacity == 4
