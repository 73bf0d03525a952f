"""Every model has one module that writes it (docs/architecture.md). A scan of the apps' source
(tests, benchmarks and migrations aside) for writes of a Bot outside bots/services.py, of a
CrawlRun outside knowledge/runs.py, of a Message outside chat/writes.py, of an Entry outside
knowledge/services.py, of a canned reply outside inbox/canned.py, of a note outside inbox/notes.py,
of a browser's push subscription outside inbox/push.py,
of an operator's Telegram link (OperatorLink, OperatorLinkCode) outside messengers/operators.py:
`Model.objects.create/update/delete/...` (directly or after a filter), a related manager's write
(`source.runs.create`), simple_history's bulk helpers given the model,
SQL that inserts, updates or deletes rows of its table, and `.save(`/`.delete(` on a value of the
model: a name annotated with it or assigned from its manager or its constructor, or the usual name
(`bot`, `run`, `message`, `entry`…) in a module that uses it."""

from __future__ import annotations

import ast
import re

import pytest

from bots.models import Bot
from chat.models import Message
from inbox.models import CannedReply, Note, PushSubscription
from knowledge.models import CrawlRun, Entry
from messengers.models import OperatorLink, OperatorLinkCode
from tests.conftest import REPO
from tests.source import app_files

OWNERS = {
    "Bot": "bots/services.py", "CrawlRun": "knowledge/runs.py", "Message": "chat/writes.py",
    "Entry": "knowledge/services.py", "OperatorLink": "messengers/operators.py",
    "OperatorLinkCode": "messengers/operators.py", "CannedReply": "inbox/canned.py",
    "Note": "inbox/notes.py", "PushSubscription": "inbox/push.py",
}
RELATED = {
    "Bot": set(),
    "CrawlRun": {"runs", "crawl_runs"},  # Source.runs, Bot.crawl_runs
    # Conversation.messages, Bot.messages, Message.replies, a user's chat_messages
    "Message": {"messages", "replies", "chat_messages"},
    "Entry": {"entries"},  # Bot.entries, Source.entries, Page.entries
    "OperatorLink": {"operator_links"},  # a user's, a Connection's, a MessengerChat's
    "OperatorLinkCode": set(),
    "CannedReply": {"canned_replies"},  # Bot.canned_replies
    "Note": {"inbox_notes"},  # Bot.inbox_notes, Conversation.inbox_notes, a user's inbox_notes
    "PushSubscription": {"push_subscriptions"},  # a user's
}
USUAL_NAMES = {
    "Bot": {"bot"}, "CrawlRun": {"run"},
    "Message": {"message", "visitor_message", "last_answer", "answer", "reply", "note"}, "Entry": {"entry"},
    "OperatorLink": {"link"}, "OperatorLinkCode": {"found", "code"}, "CannedReply": {"canned_reply"},
    "Note": {"note"}, "PushSubscription": {"subscription"},
}
TABLES = {model.__name__: model._meta.db_table
          for model in (Bot, CrawlRun, Message, Entry, OperatorLink, OperatorLinkCode, CannedReply, Note,
                        PushSubscription)}
WRITES = {"create", "get_or_create", "update_or_create", "update", "bulk_create", "bulk_update", "delete"}
HISTORY_WRITES = {"bulk_create_with_history", "bulk_update_with_history"}  # simple_history.utils
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _receiver(node: ast.expr) -> str:
    """`bot` for `bot.save`, `run` for `self.run.save`; "" for anything else."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _manager_write(call: ast.Call, model: str) -> bool:
    """`Model.objects[...].create(...)` or `x.runs[...].update(...)`: a write method at the end of a
    chain that starts at the model's manager or at one of its related managers (on a value: a model
    SDK's `client().messages.create(...)` is no manager)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in WRITES):
        return False
    node: ast.expr = call.func.value
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Attribute):
            if node.attr == "objects" and isinstance(node.value, ast.Name) and node.value.id == model:
                return True
            if node.attr in RELATED[model] and not isinstance(node.value, ast.Call):
                return True
            node = node.value
        else:
            node = node.func
    return False


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """A function's nodes, or a module's outside its functions and classes."""
    if isinstance(scope, FUNCTIONS):
        return list(ast.walk(scope))
    statements = [node for node in getattr(scope, "body", []) if not isinstance(node, (*FUNCTIONS, ast.ClassDef))]
    return [node for statement in statements for node in ast.walk(statement)]


def _held_in(scope: ast.AST, model: str) -> set[str]:
    """Names holding the model in a function (or a module's own statements): parameters and
    variables annotated with it, variables assigned from its manager or its constructor."""
    held: set[str] = set()
    for node in _own_nodes(scope):
        if isinstance(node, ast.arg) and node.annotation is not None and model in _names(node.annotation):
            held.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and model in _names(node.annotation):
            held.add(_receiver(node.target))
        elif isinstance(node, ast.Assign) and _a_row(node.value, model):
            held.update(_receiver(target) for target in node.targets)
    return held - {""}


def _a_row(value: ast.expr, model: str) -> bool:
    """A value read through the model's manager (`Model.objects….get()`) or made by its constructor."""
    read = any(isinstance(part, ast.Attribute) and part.attr == "objects" and isinstance(part.value, ast.Name)
               and part.value.id == model for part in ast.walk(value))
    return read or (isinstance(value, ast.Call) and _receiver(value.func) == model)


def _history_write(call: ast.Call, model: str) -> bool:
    """`bulk_create_with_history(rows, Model, ...)`: simple_history's bulk helpers, given the model."""
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    return _receiver(call.func) in HISTORY_WRITES and any(
        isinstance(argument, ast.Name) and argument.id == model for argument in arguments)


def _sql_write(model: str) -> re.Pattern[str]:
    """SQL that changes rows of the model's table (another table's DELETE … USING it only reads it)."""
    return re.compile(rf'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?{TABLES[model]}\b', re.IGNORECASE)


class _Writes(ast.NodeVisitor):
    """Walks a module keeping, per function, the names that hold the model there (a function also
    sees its enclosing function's), plus the usual name wherever the module uses the model."""

    def __init__(self, tree: ast.AST, model: str) -> None:
        self.model, self.lines, self.sql = model, set[int](), _sql_write(model)
        imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    for alias in node.names}
        usual = USUAL_NAMES[model] if model in _names(tree) | imported else set()
        self.held = [usual | _held_in(tree, model)]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.held.append(self.held[-1] | _held_in(node, self.model))
        self.generic_visit(node)
        self.held.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        saved = (isinstance(func, ast.Attribute) and func.attr in ("save", "delete")
                 and _receiver(func.value) in self.held[-1])
        if saved or _manager_write(node, self.model) or _history_write(node, self.model):
            self.lines.add(node.lineno)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and self.sql.search(node.value):
            self.lines.add(node.lineno)


def writes(source: str, model: str) -> list[int]:
    """Line numbers where `source` writes `model`."""
    tree = ast.parse(source)
    visitor = _Writes(tree, model)
    visitor.visit(tree)
    return sorted(visitor.lines)


@pytest.mark.parametrize(("snippet", "model"), [
    ("Bot.objects.update_or_create(slug='x', defaults={})", "Bot"),
    ("Bot.objects.filter(pk=1).update(voice={})", "Bot"),
    ("def f(row: Bot):\n    row.save(update_fields=['voice'])", "Bot"),
    ("row = Bot.objects.select_for_update().get(pk=1)\nrow.save()", "Bot"),
    ("from bots.models import Bot\nself.bot.save()", "Bot"),
    ("CrawlRun.objects.create(bot_id=1, source=s)", "CrawlRun"),
    ("CrawlRun.objects.filter(pk=1, status='queued').update(status='running')", "CrawlRun"),
    ("source.runs.create(bot_id=1)", "CrawlRun"),
    ("def f(run: CrawlRun | None):\n    run.save(update_fields=['status'])", "CrawlRun"),
    ("from knowledge.models import CrawlRun\nself.run.save(update_fields=COUNTERS)", "CrawlRun"),
    ("Message.objects.create(conversation=c, bot_id=1, role='system', text='…')", "Message"),
    ("conversation.messages.filter(role='bot').update(rating=0)", "Message"),
    ("row = Message(conversation=c, role='bot')\nrow.save(force_insert=True)", "Message"),
    ("def f(answer: Message):\n    answer.save(update_fields=['flags'])", "Message"),
    ("from chat.models import Message\nlast_answer.save(update_fields=['flags'])", "Message"),
    ("Message.objects.filter(conversation_id=1).delete()", "Message"),
    ("Entry.objects.filter(bot_id=1).update(embedding=None, embedding_model='')", "Entry"),
    ("source.entries.filter(active=True).update(active=False)", "Entry"),
    ("bulk_create_with_history(batch, Entry, batch_size=1000)", "Entry"),
    ("cursor.executemany('UPDATE knowledge_entry SET embedding = %s::vector WHERE id = %s', rows)", "Entry"),
    ("from knowledge.models import Entry\nentry.delete()", "Entry"),
])
def test_the_scan_sees_a_write(snippet, model):
    assert writes(snippet, model)


@pytest.mark.parametrize(("snippet", "model"), [
    ("Bot.objects.filter(pk=1).first()\nconversation.save()", "Bot"),
    ("run.save(update_fields=['status'])  # a BatchRun: the module knows no CrawlRun", "CrawlRun"),
    ("from bots.models import Bot\ndef f(obj: Bot):\n    pass\ndef g(obj: ApiKey):\n    obj.save()", "Bot"),
    ("CrawlRun.objects.filter(source=s).values_list('pk', flat=True).first()", "CrawlRun"),
    ("with self._client().messages.create(model='m', messages=[], stream=True) as events:\n    pass", "Message"),
    ("Message.objects.filter(reply_to=m, role='system').first()", "Message"),
    ("message = Message.objects.get(pk=1)\nmessage.flag('friction')", "Message"),
    ("cursor.execute('DELETE FROM knowledge_lexeme l USING knowledge_entry e WHERE e.id = %s', [1])", "Entry"),
    ("cursor.execute('SELECT count(*) FROM knowledge_entry WHERE bot_id = %s', [1])", "Entry"),
    ("entry.save()  # a draft's entry in a module that knows no Entry", "Entry"),
])
def test_the_scan_leaves_reads_and_other_models_alone(snippet, model):
    assert not writes(snippet, model)


def test_bots_crawl_runs_messages_and_entries_are_written_by_their_own_module_only():
    files = app_files()
    assert {OWNERS[model] for model in OWNERS} <= {str(path.relative_to(REPO)) for path in files}
    found = [
        f"{path.relative_to(REPO)}:{line}: writes a {model} (only {OWNERS[model]} may)"
        for path in files
        for model in OWNERS
        if str(path.relative_to(REPO)) != OWNERS[model]
        for line in writes(path.read_text(encoding="utf-8"), model)
    ]
    assert not found, "\n".join(found)
