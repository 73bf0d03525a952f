"""Domain errors of the Knowledge layer. Each carries `.message`: addressed to a shop owner (in the
language active when it was raised: Russian first, English through gettext), naming the file and saying
what to do. Views, admin actions, commands and consumers show
`.message` as is, so it must never contain a traceback or a library's own wording."""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext as _

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
            _("Файл «%(name)s» слишком большой: %(size)s МБ при пределе %(limit)s МБ. "
              "Разделите его на несколько файлов поменьше.") % {
                "name": filename, "size": _megabytes(size), "limit": _megabytes(limit)},
        )


class DocumentEmpty(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename, _("В файле «%(name)s» нет текста. Проверьте, что загружаете нужный файл.") % {"name": filename}
        )


class DocumentUnsupported(DocumentError):
    def __init__(self, filename: str, hint: str = "") -> None:
        base = _("Файл «%(name)s» не поддерживается. Загрузите PDF, DOCX, TXT или Markdown (.md).") % {"name": filename}
        super().__init__(filename, f"{base} {hint}".strip())


class DocumentEncrypted(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            _("Файл «%(name)s» защищён паролем. Снимите защиту (сохраните копию без пароля) и загрузите снова.")
            % {"name": filename},
        )


class DocumentCorrupt(DocumentError):
    def __init__(self, filename: str, kind: str) -> None:
        super().__init__(
            filename,
            _("Файл «%(name)s» повреждён или это не %(kind)s. "
              "Откройте его в редакторе, сохраните заново как %(kind)s и загрузите ещё раз.") % {
                "name": filename, "kind": kind},
        )


class DocumentHasNoText(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            _("В файле «%(name)s» нет текстового слоя — похоже, это скан или картинки. "
              "Распознайте текст (OCR) или загрузите тот же документ в формате DOCX или TXT.") % {"name": filename},
        )


class DocumentEncodingUnknown(DocumentError):
    def __init__(self, filename: str) -> None:
        super().__init__(
            filename,
            _("Не удалось определить кодировку файла «%(name)s». Сохраните его в кодировке UTF-8 "
              "и загрузите снова.") % {"name": filename},
        )


class RowsInvalid(KnowledgeError):
    """A table or line file with bad rows. Nothing was imported; every bad row is listed."""

    def __init__(self, what: str, problems: list[str]) -> None:
        listed = problems[:MAX_LISTED_PROBLEMS]
        more = len(problems) - len(listed)
        tail = "\n" + _("… и ещё ошибок: %(n)s") % {"n": more} if more > 0 else ""
        super().__init__(_("%(what)s не импортирован, ничего не сохранено. Исправьте:") % {"what": what} + "\n"
                         + "\n".join(listed) + tail)
        self.problems = problems


class QAInvalid(KnowledgeError):
    """A single question/answer pair the owner typed that cannot be saved."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(_("Пара «вопрос — ответ» не сохранена: %(problems)s.") % {"problems": "; ".join(problems)})
        self.problems = problems


class EntryVersionNotFound(KnowledgeError):
    def __init__(self, entry_id: int, history_id: int) -> None:
        super().__init__(
            _("У записи №%(entry)s нет версии №%(version)s. Обновите страницу и выберите версию из списка.") % {
                "entry": entry_id, "version": history_id}
        )
        self.entry_id = entry_id
        self.history_id = history_id


def _megabytes(size: int) -> str:
    return number_format(size / (1024 * 1024), 1, use_l10n=True)  # "1,5" in Russian, "1.5" in English


class EntryInvalid(KnowledgeError):
    """An entry typed by a person or sent by another system that cannot be stored; nothing was saved.
    `.problems` maps a field name to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__(_("Запись не сохранена: %(problems)s.") % {"problems": "; ".join(problems.values())})
        self.problems = problems


class EntryConflict(KnowledgeError):
    """The question is already in the bot's knowledge: the existing pair is changed, not doubled."""

    def __init__(self, existing_id: int) -> None:
        super().__init__(
            _("Такой вопрос уже есть в знаниях: запись №%(entry)s. Измените её, а не добавляйте вторую.") % {
                "entry": existing_id}
        )
        self.existing_id = existing_id


class SourceInvalid(KnowledgeError):
    """A source that cannot be added or crawled as asked; nothing was saved."""
