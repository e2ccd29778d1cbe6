"""To-do items and the in-memory store that numbers them."""

from __future__ import annotations

from dataclasses import dataclass

from todocli.errors import AlreadyDoneError, NotFoundError


@dataclass
class Todo:
    id: int
    title: str
    done: bool = False


class TodoStore:
    """Todos by id. Ids start at 1 and are never reused, even after a removal."""

    def __init__(self) -> None:
        self._todos: dict[int, Todo] = {}
        self._next_id = 1

    def add(self, title: str) -> Todo:
        title = title.strip()
        if not title:
            raise ValueError("a todo needs a title")
        todo = Todo(self._next_id, title)
        self._todos[todo.id] = todo
        self._next_id += 1
        return todo

    def get(self, todo_id: int) -> Todo:
        try:
            return self._todos[todo_id]
        except KeyError:
            raise NotFoundError(f"no todo with id {todo_id}") from None

    def remove(self, todo_id: int) -> Todo:
        todo = self.get(todo_id)
        del self._todos[todo_id]
        return todo

    def complete(self, todo_id: int) -> Todo:
        """Mark a todo done; NotFoundError if there is none, AlreadyDoneError if it is done."""
        todo = self.get(todo_id)
        if todo.done:
            raise AlreadyDoneError(f"todo {todo_id} is already done")
        todo.done = True
        return todo

    def all(self) -> list[Todo]:
        """Every todo, by id."""
        return [self._todos[i] for i in sorted(self._todos)]

    def pending(self) -> list[Todo]:
        """The todos not done yet, by id."""
        return [todo for todo in self.all() if not todo.done]
