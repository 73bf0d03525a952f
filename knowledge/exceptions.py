"""Domain errors of the Knowledge layer. Each carries `.message`: Russian, addressed to a shop owner,
naming the file and saying what to do. Views, admin actions, commands and consumers show
`.message` as is, so it must never contain a traceback or a library's own wording."""

from __future__ import annotations

# How many bad lines a message lists; `.problems` keeps them all.
MAX_LISTED_PROBLEMS = 30


class KnowledgeError(Exception):
    """Base of every Knowledge error; catch this one to show `.message` to a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class DocumentError(KnowledgeError):
    """A file that cannot become knowledge. Nothing from it was saved."""

    def __init__(self, filename: str, message: str) -> None:
        super().__init__(message)
        self.filename = filename


class DocumentTooLarge(DocumentError):
    def __init__(self, filename: str, size: int, limit: int) -> None:
        super().__init__(
            filename,
            f"Файл «{filename}» слишком большой: {_megabytes(size)} МБ при пределе {_megabytes(limit)} МБ. "
            "Разделите его на несколько файлов поменьше.",
        )


class DocumentEmpty(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename, f"В файле «{filename}» нет текста. Проверьте, что загружаете нужный файл."
        )


class DocumentUnsupported(DocumentError):
    def __init__(self, filename: str, hint: str = "") -> None:
        base = (
            f"Файл «{filename}» не поддерживается. Загрузите PDF, DOCX, TXT или Markdown (.md)."
        )
        super().__init__(filename, f"{base} {hint}".strip())


class DocumentEncrypted(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            f"Файл «{filename}» защищён паролем. Снимите защиту (сохраните копию без пароля) и загрузите снова.",
        )


class DocumentCorrupt(DocumentError):
    def __init__(self, filename: str, kind: str) -> None:
        super().__init__(
            filename,
            f"Файл «{filename}» повреждён или это не {kind}. "
            f"Откройте его в редакторе, сохраните заново как {kind} и загрузите ещё раз.",
        )


class DocumentHasNoText(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            f"В файле «{filename}» нет текстового слоя — похоже, это скан или картинки. "
            "Распознайте текст (OCR) или загрузите тот же документ в формате DOCX или TXT.",
        )


class DocumentEncodingUnknown(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            f"Не удалось определить кодировку файла «{filename}». Сохраните его в кодировке UTF-8 "
            "и загрузите снова.",
        )


class RowsInvalid(KnowledgeError):
    """A table or line file with bad rows. Nothing was imported; every bad row is listed."""

    def __init__(self, what: str, problems: list[str]) -> None:
        listed = problems[:MAX_LISTED_PROBLEMS]
        more = len(problems) - len(listed)
        tail = f"\n… и ещё ошибок: {more}" if more > 0 else ""
        super().__init__(f"{what} не импортирован, ничего не сохранено. Исправьте:\n" + "\n".join(listed) + tail)
        self.problems = problems


class QAInvalid(KnowledgeError):
    """A single question/answer pair the owner typed that cannot be saved."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("Пара «вопрос — ответ» не сохранена: " + "; ".join(problems) + ".")
        self.problems = problems


class EntryVersionNotFound(KnowledgeError):
    def __init__(self, entry_id: int, history_id: int) -> None:
        super().__init__(
            f"У записи №{entry_id} нет версии №{history_id}. Обновите страницу и выберите версию из списка."
        )
        self.entry_id = entry_id
        self.history_id = history_id


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f}".replace(".", ",")


class EntryInvalid(KnowledgeError):
    """An entry typed by a person or sent by another system that cannot be stored; nothing was saved.
    `.problems` maps a field name to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("Запись не сохранена: " + "; ".join(problems.values()) + ".")
        self.problems = problems


class EntryConflict(KnowledgeError):
    """The question is already in the bot's knowledge: the existing pair is changed, not doubled."""

    def __init__(self, existing_id: int) -> None:
        super().__init__(
            f"Такой вопрос уже есть в знаниях: запись №{existing_id}. Измените её, а не добавляйте вторую."
        )
        self.existing_id = existing_id


class SourceInvalid(KnowledgeError):
    """A source that cannot be added or crawled as asked; nothing was saved."""
