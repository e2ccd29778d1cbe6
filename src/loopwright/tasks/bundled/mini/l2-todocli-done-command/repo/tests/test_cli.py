class TestExistingCommands:
    def test_add_and_list(self, session):
        assert session.call("add buy milk") == 0
        assert session.out.getvalue() == "added 1: buy milk\n"
        session.call("add walk the dog")
        assert session.call("list") == 0
        assert session.out.getvalue() == "1: buy milk\n2: walk the dog\n"

    def test_empty_list(self, session):
        assert session.call("list") == 0
        assert session.out.getvalue() == "nothing to do\n"

    def test_remove_and_ids_not_reused(self, session):
        session.call("add a")
        session.call("add b")
        assert session.call("remove 1") == 0
        assert session.out.getvalue() == "removed 1: a\n"
        session.call("add c")
        session.call("list")
        assert session.out.getvalue() == "2: b\n3: c\n"

    def test_errors_become_exit_codes(self, session):
        assert session.call("remove 9") == 1
        assert session.err.getvalue() == "error: no todo with id 9\n"
        assert session.call("remove x") == 2
        assert session.call("frobnicate") == 2
        assert session.call("list extra") == 2
