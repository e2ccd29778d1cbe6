class TestDoneBasic:
    def test_done_marks_todo_and_list_shows_it(self, session):
        session.call("add buy milk")
        session.call("add walk the dog")
        assert session.call("done 1") == 0
        assert session.out.getvalue() == "completed 1: buy milk\n"
        session.call("list")
        assert session.out.getvalue() == "1: buy milk (done)\n2: walk the dog\n"
