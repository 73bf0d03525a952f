"""Forms of the dashboard: they parse and check what a person typed; the work is in services."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from bots.forms import OriginsField
from owner.dashboard.sitecheck import start_url


class SiteForm(forms.Form):
    url = forms.CharField(
        label=_("Адрес сайта"), max_length=500,
        widget=forms.TextInput(attrs={"placeholder": "https://shop.ru/", "inputmode": "url", "autocomplete": "url"}),
        help_text=_("Главная страница сайта: с неё и из карты сайта бот прочитает страницы."),
    )
    name = forms.CharField(label=_("Название бота"), max_length=200, required=False,
                           help_text=_("Например, название магазина. Можно оставить пустым."))

    def clean_url(self) -> str:
        return start_url(self.cleaned_data["url"])


class OriginsForm(forms.Form):
    origins = OriginsField(
        label=_("Сайты, где работает виджет"), required=False,
        help_text=_("По одному адресу в строке, например https://shop.ru — на других сайтах виджет не откроется."),
    )


class DocumentForm(forms.Form):
    file = forms.FileField(label=_("Файл"), help_text=_("PDF, DOCX, TXT или Markdown (.md)."))
    url = forms.URLField(label=_("Где документ опубликован"), required=False, assume_scheme="https",
                         help_text=_("Необязательно: ссылка, которую бот покажет как источник."))

    def clean_file(self) -> object:
        from knowledge.exceptions import DocumentTooLarge

        upload = self.cleaned_data["file"]
        if upload.size > settings.UPLOAD_MAX_BYTES:
            raise ValidationError(DocumentTooLarge(upload.name, upload.size, settings.UPLOAD_MAX_BYTES).message)
        return upload


class QAForm(forms.Form):
    question = forms.CharField(label=_("Вопрос"), max_length=1000, strip=True,
                               error_messages={"required": _("Напишите вопрос.")})
    answer = forms.CharField(label=_("Ответ"), max_length=5000, strip=True, widget=forms.Textarea(attrs={"rows": 3}),
                             error_messages={"required": _("Напишите ответ.")})


class TelegramForm(forms.Form):
    token = forms.CharField(
        label=_("Токен бота"), max_length=200, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false",
                                          "placeholder": "123456789:AAE…"}),
        help_text=_(
            "Его выдаёт @BotFather после команды /newbot. Токен хранится зашифрованным и больше не показывается."),
    )


class VKForm(forms.Form):
    token = forms.CharField(
        label=_("Ключ доступа сообщества"), max_length=400, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false", "placeholder": "vk1.a.…"}),
        help_text=_("«Управление → Работа с API → Ключи доступа»: ключ с доступом к сообщениям сообщества."),
    )
    confirmation = forms.CharField(
        label=_("Строка подтверждения"), max_length=64, strip=True,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "placeholder": "1a2b3c4d"}),
        help_text=_("«Работа с API → Callback API»: строка, которую должен вернуть сервер."),
    )
    secret = forms.CharField(
        label=_("Секретный ключ"), max_length=64, strip=True,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=_("Придумайте 8–50 латинских букв и цифр и впишите тот же ключ в настройках Callback API."),
    )


class MaxForm(forms.Form):
    prefix = "max"  # the page has Telegram's token field too: ids stay apart (id_max-token)

    token = forms.CharField(
        label=_("Токен бота MAX"), max_length=600, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=_("business.max.ru: «Чат-боты» → ⋮ → «Настройки». Токен хранится зашифрованным и больше не "
                    "показывается."),
    )


class CrmForm(forms.Form):
    """The bot's CRM: none, amoCRM (the account's address and a long-lived token) or Bitrix24 (an
    inbound webhook's address). The addresses and the key are checked in crm/services.py."""

    prefix = "crm"
    CHOICES = (("none", _("Не отправлять")), ("amocrm", "amoCRM"), ("bitrix24", _("Битрикс24")))

    kind = forms.ChoiceField(label=_("Куда отправлять заявки"), choices=CHOICES, widget=forms.RadioSelect,
                             error_messages={"required": _("Выберите CRM."),
                                             "invalid_choice": _("Выберите CRM из списка.")})
    amocrm_url = forms.CharField(
        label=_("Адрес аккаунта amoCRM"), max_length=300, required=False, strip=True,
        widget=forms.TextInput(attrs={"placeholder": "company.amocrm.ru", "inputmode": "url", "spellcheck": "false",
                                      "autocomplete": "off"}),
        help_text=_("Как в адресной строке, когда вы в amoCRM: company.amocrm.ru (или только company)."),
    )
    amocrm_token = forms.CharField(
        label=_("Долгосрочный токен"), max_length=4000, required=False, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=_("amoCRM → «amoМаркет» → «Создать интеграцию» (внешняя) → «Ключи и доступы» → «Долгосрочный "
                    "токен». Хранится зашифрованным и больше не показывается."),
    )
    bitrix24_url = forms.CharField(
        label=_("Адрес входящего вебхука"), max_length=500, required=False, strip=True,
        widget=forms.PasswordInput(attrs={"autocomplete": "off", "spellcheck": "false",
                                          "placeholder": "https://company.bitrix24.ru/rest/1/abc123xyz/"}),
        help_text=_("Битрикс24 → «Разработчикам» → «Другое» → «Входящий вебхук» с правом «CRM (crm)». В адресе "
                    "есть секретный код: он хранится зашифрованным и больше не показывается."),
    )

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        kind = data.get("kind")
        if kind == "amocrm":
            if not data.get("amocrm_url"):
                self.add_error("amocrm_url", _("Укажите адрес аккаунта amoCRM, например company.amocrm.ru."))
            if not data.get("amocrm_token"):
                self.add_error("amocrm_token", _("Вставьте долгосрочный токен из настроек интеграции amoCRM."))
        elif kind == "bitrix24" and not data.get("bitrix24_url"):
            self.add_error("bitrix24_url", _("Вставьте адрес входящего вебхука Битрикс24."))
        return data
