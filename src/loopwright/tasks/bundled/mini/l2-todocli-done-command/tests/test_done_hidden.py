import pytest

from todocli import errors
from todocli.commands import COMMANDS
from todocli.store import Todo, TodoStore


class TestStoreComplete:
    def test_new_todos_are_pending(self):
        store = TodoStore()
        assert store.add("a").done is False
        assert Todo(5, "x").done is False

    def test_complete_sets_done_and_returns_the_todo(self):
        store = TodoStore()
        store.add("a")
        todo = store.complete(1)
        assert (todo.id, todo.title, todo.done) == (1, "a", True)
        assert store.get(1).done is True

    def test_complete_unknown_id_raises_not_found(self):
        with pytest.raises(errors.NotFoundError):
            TodoStore().complete(3)

    def test_complete_twice_raises_already_done(self):
        store = TodoStore()
        store.add("a")
        store.complete(1)
        with pytest.raises(errors.AlreadyDoneError, match="todo 1 is already done"):
            store.complete(1)
        assert issubclass(errors.AlreadyDoneError, errors.TodoError)
        assert errors.AlreadyDoneError.exit_code == 3

    def test_pending_lists_only_open_todos(self):
        store = TodoStore()
        for title in "abc":
            store.add(title)
        store.complete(2)
        assert [t.id for t in store.pending()] == [1, 3]
        assert [t.id for t in store.all()] == [1, 2, 3]


class TestDoneCommand:
    def test_done_is_registered(self):
        assert "done" in COMMANDS

    def test_done_prints_completed(self, session):
        session.call("add water the plants")
        assert session.call("done 1") == 0
        assert session.out.getvalue() == "completed 1: water the plants\n"
        assert session.store.get(1).done

    def test_done_twice_exits_3(self, session):
        session.call("add a")
        session.call("done 1")
        assert session.call("done 1") == 3
        assert session.err.getvalue() == "error: todo 1 is already done\n"

    def test_done_unknown_id_exits_1(self, session):
        assert session.call("done 4") == 1
        assert session.err.getvalue() == "error: no todo with id 4\n"

    @pytest.mark.parametrize("line", ["done", "done x", "done 1 2", "done -1"])
    def test_done_bad_arguments_are_usage_errors(self, session, line):
        session.call("add a")
        assert session.call(line) == 2
        assert session.err.getvalue() == "error: usage: done <id>\n"
        assert not session.store.get(1).done


class TestListPending:
    def test_list_marks_done_todos(self, session):
        for title in ("a", "b", "c"):
            session.call(f"add {title}")
        session.call("done 3")
        session.call("list")
        assert session.out.getvalue() == "1: a\n2: b\n3: c (done)\n"

    def test_list_pending_hides_done_todos(self, session):
        for title in ("a", "b", "c"):
            session.call(f"add {title}")
        session.call("done 2")
        assert session.call("list --pending") == 0
        assert session.out.getvalue() == "1: a\n3: c\n"

    def test_list_pending_when_everything_is_done(self, session):
        session.call("add a")
        session.call("done 1")
        session.call("list --pending")
        assert session.out.getvalue() == "nothing to do\n"

    def test_list_rejects_other_options(self, session):
        assert session.call("list --all") == 2
        assert session.err.getvalue() == "error: usage: list [--pending]\n"
