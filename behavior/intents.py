"""Intent rules that run before any language model.

Two mistakes are expensive in a website chat: calling a live operator when the visitor asked about
goods, and asking for an order number when nobody has an order. Both are decided here, by regular
expressions, before any model call: fast, free, and the same phrase always takes the same path. The
model may still raise `operator` or `order` later for phrases these rules missed; the rules exist
to keep false ones out, so every operator/order pattern needs a verb or an unmistakable context,
never a bare noun ("костюм для менеджера", "кабель для соединения" are goods).

What must stay true:
- The checks run in the order of `INTENT_NAMES`; the first match wins.
- A greeting (and a leading "спасибо") is cut off the front and the rest decides.
- All patterns are compiled once at import time and expect text normalised by `_normalize`
  (ё -> е, punctuation -> spaces), so they are written with "е" only.
- `tests/behavior/intents_golden.tsv` passes 100% and the MASSIVE sample yields no operator/order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

IntentName = Literal["whoami", "operator", "order", "greeting", "thanks", "read", "purchase", "product", "question"]
Topic = Literal["", "delivery", "payment", "return", "warranty"]

INTENT_NAMES: Final[tuple[IntentName, ...]] = (
    "whoami",
    "operator",
    "order",
    "greeting",
    "thanks",
    "read",
    "purchase",
    "product",
    "question",
)
PURCHASE_TOPICS: Final[tuple[Topic, ...]] = ("delivery", "payment", "return", "warranty")


@dataclass(frozen=True, slots=True)
class Intent:
    """What the rules decided. `rest` is the visitor's text with a leading greeting or "спасибо"
    cut off (the whole text when nothing was cut, "" for a bare greeting or thanks): it is what
    retrieval and the model should work on."""

    name: IntentName
    topic: Topic = ""
    rest: str = ""


_FLAGS: Final = re.IGNORECASE | re.VERBOSE
# The rules read the start of a message only: what a visitor wants is said early, and a bound keeps a
# pasted wall of text from costing more than a few milliseconds.
_MAX_CHARS: Final = 1000
_YO: Final = str.maketrans("ёЁ", "еЕ")
# One character in, one space out: offsets in the normalised text stay valid in the original.
_PUNCT: Final = re.compile(r"[^\w\s-]")


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{part})" for part in parts), _FLAGS)


# --- people a visitor may ask for, by case -----------------------------------------------------
_ROLE = r"человек|оператор|менеджер|сотрудник|консультант|специалист|администратор|админ|продав(?:ец|ц)"
_P_NOM = r"(?:человек|оператор|менеджер|сотрудник|консультант|специалист|администратор|продавец|(?:тех)?поддержка)"
_P_ACC = (
    r"(?:(?:человек|оператор|менеджер|сотрудник|консультант|специалист|администратор|админ|руководител)[ая]"
    r"|продавца|(?:тех)?поддержку|кого[- ]?(?:то|нибудь)(?:\s+из\s+\w+)?)"
)
_P_INS = (
    r"(?:(?:человек|оператор|менеджер|сотрудник|консультант|специалист|администратор|админ)ом"
    r"|продавцом|руководителем|(?:тех)?поддержкой|службой\s+(?:поддержки|заботы)|(?:колл|call)[- ]?центром"
    r"|живым|кем[- ]?(?:то|нибудь)(?:\s+из\s+\w+)?)"
)
_P_DAT = (
    r"(?:(?:человек|оператор|менеджер|сотрудник|консультант|специалист|администратор|админ)у"
    r"|продавцу|руководителю|(?:тех)?поддержке)"
)
# "оператор связи", "специалиста на замер", "специалист по монтажу" are not a handoff.
_P_GUARD = (
    r"(?![\w-])(?!\s+(?:связи|сотов\w*|мобильн\w*|мтс|билайн\w*|мегафон\w*|теле2|tele2|эдо|офд|фискальн\w*"
    r"|на\s+(?:замер|дом|объект|выезд|установк\w*|монтаж\w*|сборк\w*)|по\s+(?:установке|монтажу|сборке|ремонту)))"
)
# After "нужен" a person is often a service or a job: "нужен человек для сборки", "... вакансия".
_NEED_GUARD = r"(?!\s+(?:котор\w+|чтобы|для)\b)(?!.*\b(?:ваканси|резюме|зарплат|требуется))"
_ADJ_NOM = r"(?:\w+(?:ой|ый|ий|ая|яя)\s+){0,2}"
_ADJ_ACC = r"(?:\w+(?:ого|его)\s+){0,2}"
_ADJ_INS = r"(?:\w+(?:ым|им)\s+){0,2}"
_ADJ_DAT = r"(?:\w+(?:ому|ему)\s+){0,2}"
_FILL = (
    r"(?:(?:пожалуйста|пжл|пож|плиз|pls|please|срочно|скорее|уже|же|мне|меня|нам|нас|бы|ну|тогда"
    r"|лучше|все[- ]?таки|наконец|сейчас|немедленно|ка|мне\s+нужно|мне\s+надо)\s+)*"
)
_TAIL = r"(?:\s+(?:пожалуйста|пжл|пож|плиз|pls|please|срочно|скорее|уже|же|мне|нам|бы))*"
_WITH_PERSON = (
    rf"(?:(?:с|со)\s+{_ADJ_INS}{_P_INS}|на\s+{_ADJ_ACC}{_P_ACC}|к\s+{_ADJ_DAT}{_P_DAT}|{_ADJ_ACC}{_P_ACC})" + _P_GUARD
)

_BOTLIKE = (
    r"(?:чат[- ]?)?бот(?:ом)?|робот(?:ом)?|ии|ai|нейросет(?:ь|ью)|искусственн\w+\s+интеллект\w*"
    r"|автоответчик(?:ом)?|gpt|chatgpt|чатгпт|гпт|программ(?:а|ой)"
)
_ROBOT_GOODS = r"(?![\w-])(?!\s+(?:пылесос|мойщик|мойщ|газонокосил|уборщик|полотер|кухонн)\w*)"
_ALIVE = r"(?:живой|живая|живые|реальный|реальная|настоящий|настоящая|обычный)"
_ENDS_HERE = r"(?=\s*$|\s+(?:или|ли|вообще|да|нет)\b)"

_WHOAMI: Final = _rx(
    r"\b(?:(?:ты|вы)\s+кто|кто\s+(?:ты|вы))\b(?!\s+(?:по|в|на)\b)",
    rf"\b(?:ты|вы)\s+(?:{_ALIVE}\s+)?(?:{_BOTLIKE}){_ROBOT_GOODS}",
    rf"\b(?:ты|вы)\s+(?:{_ALIVE}\s+)?(?:человек|люди|{_ROLE})(?![\w-])" + _ENDS_HERE,
    rf"\b(?:ты|вы)\s+{_ALIVE}" + _ENDS_HERE,
    rf"\bэто\s+(?:бот|чат[- ]?бот|робот|ии|нейросеть|автоответчик|{_ALIVE}\s+человек){_ROBOT_GOODS}",
    r"\b(?:бот|робот|человек|живой)\s+ли\s+(?:ты|вы)\b",
    r"\bс\s+кем\s+(?:я\s+)?(?:сейчас\s+)?(?:говорю|разговариваю|общаюсь|переписываюсь|беседую)\b",
    r"\bкто\s+(?:со\s+мной|мне)\s+(?:сейчас\s+)?(?:говорит|отвечает|пишет|общается|переписывается)\b",
    r"\bя\s+(?:сейчас\s+)?(?:говорю|разговариваю|общаюсь|переписываюсь)\s+(?:с|со)\s+(?:\w+\s+)?"
    r"(?:человеком|ботом|роботом|машиной|нейросетью|программой|оператором|живым)\b",
    r"\bмне\s+(?:сейчас\s+)?отвечает\s+(?:бот|робот|человек|живой|нейросеть|программа)\b",
    r"\bкак\s+(?:тебя|вас)\s+зовут\b|\bчто\s+ты\s+такое\b",
    r"^\s*(?:это\s+)?(?:живой|реальный|настоящий)\s+человек\s*$",
    r"\bwho\s+(?:are|r)\s+(?:you|u)\b|\bwhat\s+are\s+you\b",
    r"\bare\s+(?:you|u)\s+(?:a\s+|an\s+)?(?:real\s+|live\s+)?(?:bot|robot|human|person|ai|real|machine|chatbot)\b",
    r"\bis\s+(?:this|it)\s+(?:a\s+)?(?:bot|robot|human|real\s+person|ai|chatbot)\b",
    r"\b(?:who\s+)?am\s+i\s+(?:talking|speaking|chatting)\b",
)

_CALL_VERB = (
    r"(?:позов\w*|позвать|позови|зовите|приглас\w*|дайте|дай|давайте|хочу|хотим|хотел[аи]?|можно|жду|требую"
    r"|прошу)(?:-ка)?"
)
_OPERATOR: Final = _rx(
    # Perfective verbs are a concrete request: "поговорить с менеджером", "связаться со специалистом".
    r"\b(?:поговорить|поговорю|пообщаться|побеседовать|связаться|связь)"
    rf"\s+{_FILL}(?:с|со)\s+{_ADJ_INS}{_P_INS}{_P_GUARD}",
    # Imperfective ones also title books ("как общаться с менеджером"), so they need a wish first.
    r"\b(?:хочу|хотел[аи]?|можно|могу|дайте|давайте|нужно|надо)\s+(?:\w+\s+)?(?:говорить|общаться"
    rf"|переписываться|разговаривать)\s+{_FILL}(?:с|со)\s+{_ADJ_INS}{_P_INS}{_P_GUARD}",
    # "соедините меня с менеджером", "переключите на оператора", "свяжите со специалистом"
    rf"\b(?:соедин|свяж|связ|переключ|перевед|перевест|подключ)\w*\s+{_FILL}{_WITH_PERSON}",
    # "позовите живого оператора", "хочу к оператору", "можно консультанта", "дайте человека"
    rf"\b{_CALL_VERB}\s+{_FILL}{_WITH_PERSON}",
    # the person first: "оператора позови", "оператор нужен", "мне бы с менеджером поговорить"
    rf"^\s*{_FILL}{_ADJ_ACC}{_P_ACC}\s+{_FILL}(?:позов\w*|позвать|позови|зовите|приглас\w*|дайте|дай)\b",
    rf"^\s*{_FILL}{_ADJ_NOM}{_P_NOM}\s+{_FILL}нуж(?:ен|на)\b" + _NEED_GUARD,
    rf"^\s*{_FILL}(?:(?:а|я|можно)\s+)?(?:с|со)\s+{_ADJ_INS}{_P_INS}{_P_GUARD}\s+{_FILL}"
    r"(?:(?:хочу|можно|могу|дайте|надо|нужно)\s+)?(?:(?:по)?говорить|пообщаться|соедин\w*|свяж\w*|связ\w*"
    r"|переключ\w*)",
    # "нужен оператор", "нужна поддержка", "нужна помощь специалиста"
    rf"\bнуж(?:ен|на|но|ны)\s+{_FILL}(?:{_ADJ_NOM}{_P_NOM}|(?:помощь|консультаци[яю])\s+{_ADJ_ACC}{_P_ACC})"
    + _P_GUARD
    + _NEED_GUARD,
    # A whole message that is the request itself: "оператора!", "живого человека пожалуйста"
    rf"^\s*{_FILL}(?:к\s+|на\s+)?{_ADJ_ACC}(?:человека|оператора|менеджера|консультанта|специалиста"
    rf"|сотрудника|оператору|менеджеру){_TAIL}\s*$",
    # complaints go to a person: "хочу оставить жалобу", "у меня жалоба на курьера"
    r"\b(?:оставить|подать|написать|составить|принять|примите|хочу|у\s+меня|куда)\s+(?:\w+\s+)?"
    r"(?:жалоб|претензи)\w*+(?!\s+в\s+(?:роспотребнадзор|суд|прокуратур))",
    r"(?<!книга\s)(?<!книги\s)(?<!книгу\s)\bжалоб\w*\s+на\b|\bпожаловаться\b",
    # callbacks are a person too
    r"\bперезвоните(?=\s*$|\s+(?:мне|нам|пожалуйста|пжл|плиз|по\s+номеру))|\bпозвоните\s+мне\b"
    r"|\bнаберите\s+(?:мне|меня)\b|\bобратн\w+\s+звон\w*",
    # English
    r"\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an\s+|the\s+|some\s+|your\s+)?(?:real\s+|live\s+|actual\s+)?"
    r"(?:human|person|agent|operator|manager|representative|rep|someone|somebody|support|staff)\b",
    r"\b(?:call|get|give|connect|transfer|put)\s+(?:me\s+)?(?:to\s+|with\s+|through\s+to\s+)?(?:a\s+|an\s+|the\s+)?"
    r"(?:real\s+|live\s+)?(?:human|agent|operator|representative|person)\b",
    r"\b(?:need|want)\s+(?:a\s+|an\s+)?(?:real\s+|live\s+)?(?:human|agent|operator|representative)\b",
    r"\b(?:human|operator|agent)\s+please\b|\blive\s+(?:agent|person|support)\b|\b(?:file|make)\s+a\s+complaint\b",
)

# A question about operators or a callback is asked to be answered, not to call one: «Через сколько
# перезвонит оператор, если заказать обратный звонок?», «Как быстро отвечает поддержка?». Only
# questions of time or quantity at the start: «как связаться с менеджером» stays a request.
_ABOUT_PEOPLE: Final = _rx(
    r"^\s*(?:(?:а|и|скажите|подскажите)\s+)*(?:через\s+сколько|как\s+(?:быстро|скоро|долго)|сколько\s+(?:минут|часов"
    r"|времени|по\s+времени)|во\s+сколько|до\s+скольки|в\s+течение\s+(?:какого|скольких)|в\s+какое\s+время)\b",
    r"^\s*(?:(?:а|и)\s+)*how\s+(?:long|soon|quickly|fast)\b",
)

# --- the visitor's own order ----------------------------------------------------------------------
_ORDER_NOUN = r"(?:заказ(?:а|ы|ом|у|е|ов|ик)?|посылк(?:а|и|у|ой|е)|отправлени(?:е|я|ю|ем))\b"
_NOT_MONEY = r"(?![\d])(?![\s.]*(?:р|руб\w*|тыс\w*|шт\w*|к|k|евро|долл\w*|usd|eur)\b)"
_ORDER: Final = _rx(
    rf"\b(?:мой|моего|моему|моим|моем|мои|моих|моя|мою|моей|наш|нашего|нашу)\s+(?:\w+\s+)?{_ORDER_NOUN}",
    rf"\b{_ORDER_NOUN}\s+(?:мой|моя|мои|наш)\b",
    rf"\bгде\s+(?:(?:же|сейчас|теперь|вообще|мой|моя|мои|мою|наш|мне)\s+)*{_ORDER_NOUN}",
    rf"\bстатус\w*\s+(?:\w+\s+)?(?:{_ORDER_NOUN}|доставк\w*)|\b{_ORDER_NOUN}\s+(?:в\s+)?статус",
    rf"\b(?:отследить|отслеживать|отследите|отследи|(?<!для\s)отслеживани\w*)\s+(?:\w+\s+)?(?:{_ORDER_NOUN}|доставк\w*|груз\w*)"
    r"|\b(?:как|где)\s+(?:можно\s+)?отследить\b",
    r"\bтрек-номер\w*|\bтрекномер\w*|\bтрек-код\w*"
    rf"|\b(?:где|какой|по|мой|дайте|пришлите|скиньте|узнать|получить)\s+трек\s+номер\w*|\bтрек\s+номер\w*\s+{_ORDER_NOUN}",
    rf"\bномер\w*\s+(?:моего\s+|вашего\s+)?заказа\s*\d|\bзаказ\w*\s+(?:номер|n|no|nr)\s*\d+"
    rf"|\b(?:заказ|заказу|заказа|заказом|заказе)\s+\d{{4,}}{_NOT_MONEY}",
    rf"\b(?:{_ORDER_NOUN}|товар\w*)\s+(?:\w+\s+){{0,3}}?(?:так\s+и\s+|до\s+сих\s+пор\s+|еще\s+|все\s+еще\s+)?не\s+"
    r"(?:пришел|пришла|пришло|пришли|приехал\w*|привезли|доставили|доставлен\w*|отправили|получил\w*|прибыл\w*)\b",
    rf"\bне\s+(?:пришел|пришла|пришло|привезли|доставили|получил\w*|приехал\w*|отправили)\s+(?:\w+\s+)?"
    rf"(?:{_ORDER_NOUN}|товар\w*)",
    rf"\b{_ORDER_NOUN}\s+(?:\w+\s+)?(?:задерж\w+|опазд\w+|потерял\w*|потеря\w+|застрял\w*|отменил\w*|отменен\w*|завис\w*)",
    rf"\b{_ORDER_NOUN}\s+(?:\w+\s+)?(?:пришел|пришла|привезли|доставили)\s+(?:не\s+(?:тот|та|те|полностью|весь|целиком)"
    r"|неполн\w*|поврежденн\w*|разбит\w*|мят\w*|без\s+\w+)",
    rf"\b(?:отменили|потеряли|задерживают)\s+(?:мой\s+|мою\s+)?{_ORDER_NOUN}",
    r"\bкурьер\w*\s+(?:\w+\s+)?(?:не\s+(?:приехал\w*|пришел|привез\w*|доставил|отвечает)|опазд\w+)",
    rf"\bкогда\s+(?:(?:же|уже|мне|нам)\s+)*(?:придет|прибудет|приедет|будет|отправят|отгрузят|доставят|привезут)"
    rf"\s+(?:(?:мне|нам|мой|моя|мою|мои|наш)\s+)?{_ORDER_NOUN}",
    rf"\b(?:отменить|отмените|отмена|отменю|изменить|измените|поменять|поменяйте|перенести|перенесите"
    rf"|дополнить|добавить\s+в|добавьте\s+в)\s+(?:\w+\s+){{0,2}}?{_ORDER_NOUN}",
    r"(?:^\s*|\bя\s+)(?:уже\s+|вчера\s+|недавно\s+|давно\s+)?(?:заказал\w*|оформил\w*|оплатил\w*|сделал\w*\s+заказ)\b.*?"
    r"\b(?:где|когда|статус|до\s+сих\s+пор|так\s+и\s+не|отследить|отменить|не\s+(?:при|дост|получ|отпр))",
    r"\bwhere\s+is\s+my\s+(?:order|package|parcel|delivery)\b|\bmy\s+order\b|\border\s+status\b"
    r"|\btrack(?:ing)?\s+(?:my\s+)?(?:order|package|parcel)\b|\border\s+(?:no\s+|number\s+)?\d{3,}",
)

# --- courtesy ---------------------------------------------------------------------------------------
_GREETING_WORD = (
    r"здравствуй(?:те)?|здраствуй(?:те)?|здрасьте|здрасте|здрасти"
    r"|добр(?:ый|ого|ое|ой|ых)\s+(?:день|дня|вечер|вечера|утро|утра|ночи|время\s+суток|времени(?:\s+суток)?)"
    r"|(?:день|вечер)\s+добрый|утро\s+доброе|доброго\s+времени\s+суток"
    r"|привет(?:ик|ики|ствую|ствуем)?|прив|хай|хелло|хеллоу|алло|ало"
    r"|hello|hi|hey|hiya|good\s+(?:morning|afternoon|evening|day)|greetings"
)
_GREETING_PREFIX: Final = re.compile(
    rf"^\s*(?:(?:{_GREETING_WORD})(?![\w-])[\s-]*(?:(?:всем|вам|ребята|друзья|there|all)(?![\w-])[\s-]*)?)+",
    _FLAGS,
)
_THANKS_WORD = r"спасиб\w*|спс|пасиб\w*|благодар(?:ю|им|ствую)|мерси|сенкс|thanks?(?:\s+you)?|thank\s+you|thx|ty"
_CLOSING = (
    r"ок|окей|ok|okay|хорошо|понятно|ясно|понял|поняла|отлично|супер|класс|все|вам|тебе|большое|огромное"
    r"|очень|ну|да|ага|угу|спасибо|спс|до\s+свидания|досвидания|всего\s+доброго|хорошего\s+дня|пока"
    r"|bye|goodbye|very|much|so|a\s+lot|great|понятно\s+все|вы\s+лучшие|good"
)
_THANKS_ONLY: Final = re.compile(
    rf"^\s*(?:(?:{_CLOSING})\s+)*(?:(?:{_THANKS_WORD})|до\s+свидания|досвидания|всего\s+доброго|пока|bye|goodbye)"
    rf"(?![\w-])(?:\s+(?:{_CLOSING}|за(?:\s+[\w-]+){{1,3}}))*\s*$",
    _FLAGS,
)
_THANKS_PREFIX: Final = re.compile(
    rf"^\s*(?:(?:большое|огромное|ок|хорошо|понятно)\s+)?(?:{_THANKS_WORD})(?![\w-])"
    r"(?:\s+(?:вам|тебе|большое|огромное|за\s+(?:помощь|ответ|информацию|консультацию)))*"
    r"\s*(?:(?:а|и|но|еще|тогда|кстати|также|but|and|also)\s+)*",
    _FLAGS,
)

# --- reading and buying -------------------------------------------------------------------------------
_READ: Final = _rx(
    r"\b(?:по|про)чита(?:ть|ю)\s+(?:\w+\s+)?(?:про|о|об|на\s+тему|по\s+теме)\b",
    r"\b(?:что|где)\s+(?:бы\s+|можно\s+|еще\s+)?(?:по|про)читать\b",
    r"\b(?:посоветуйте|порекомендуйте|хочу|дайте)\s+(?:\w+\s+)?почитать\b",
    r"\bстат(?:ья|ьи|ью|ей|ьям|ьях)\s+(?:\w+\s+)?(?:про|о|об|на\s+тему|по\s+теме|по\s+выбору|как)\b",
    r"\b(?:есть|посоветуйте|порекомендуйте|дайте|скиньте|пришлите|покажите|нужна|нужны|ищу|найдите"
    r"|подскажите|где)\s+(?:\w+\s+)?(?:стать(?:я|и|ю|ей)|обзор(?:ы|ов)?|гайд\w*)\b",
    r"\bматериал\w*\s+(?:про|о|об|на\s+тему)\b|\bполезн\w+\s+(?:стать|материал)\w*|\bблог\w*|\bгайд\w*",
    r"\bread\s+about\b|\barticles?\s+(?:about|on)\b|\bsomething\s+to\s+read\b",
)
_PURCHASE: Final[tuple[tuple[Topic, re.Pattern[str]], ...]] = (
    (
        "delivery",
        _rx(
            r"\bд[оа]ст?авк\w*|\bдостав\w*|\bпривез\w*|\bпривоз\w*|\bкурьер\w*|\bсамовывоз\w*|\bпункт\w*\s+выдач\w*",
            r"\bпвз\b|\bпостамат\w*|\bсдэк\w*|\bcdek\b|\bboxberry\b|\bбоксберри\b|\bпочт\w*\s+росси\w*",
            r"\bотправ(?:ляете|ка|ку|ки|ите|ят)\b|\bв\s+регион\w*|\bза\s+мкад\b",
            r"\bdeliver\w*|\bshipping\b|\bship\s+to\b|\bpick\s*up\b",
        ),
    ),
    (
        "payment",
        _rx(
            r"\b[ао]плат\w*|\bоплач\w*|\bзаплат\w*|\bплатить\b|\bплачу\b|\bплатеж\w*|\bпредоплат\w*",
            r"\bкартой\b|\bкарт(?:а|у|ы)\s+(?:мир|visa|виза|мастеркард|mastercard)\b|\bбанковск\w+\s+карт\w*",
            r"\bрассрочк\w*|\bкредит\w*|\bбезнал\w*|\bналичн\w*|\bналом\b|\bналичкой\b|\bсбп\b",
            r"\bсистем\w+\s+быстрых\s+платежей|\bсчет\w*\s+(?:для|на)\s+(?:юр|организац|ип|компани|ооо|оплат)\w*",
            r"\bвыстав\w+\s+сче?т|\bюр\s*лиц\w*|\bюрлиц\w*|\b(?:apple|google|samsung|mir|сбер)\s*pay\b|\bдолями\b",
            r"\bpay(?:ment)?\b|\bpaypal\b",
        ),
    ),
    (
        "return",
        _rx(
            r"\bвозвра(?:т|щ)\w*|\bвернуть\b|\bверну\b|\bвернут\b|\bвернете\b|\bвернем\b",
            r"(?<!курс\s)\bобмен(?!н\w*\s+курс|\s+валют)\w*",
            r"\bпоменять\s+(?:\w+\s+)?(?:товар\w*|размер\w*|цвет\w*|модел\w*|на\s+друг\w*)",
            r"\bне\s+подош(?:ел|ла|ло|ли)\b|\bне\s+подходит\b|\bотказ\w*\s+от\s+(?:товар|покупк|заказ)\w*",
            r"\brefund\w*|\breturn\w*|\bexchange\b",
        ),
    ),
    (
        "warranty",
        _rx(
            r"\bгарант\w*|\bсервисн\w*|\bсломал\w*|\bсломан\w*|\bполомк\w*|\bполомал\w*|\bнеисправ\w*",
            r"\bбракован\w*|\bбрак\b|\bwarranty\b|\bguarantee\b|\bbroken\b",
        ),
    ),
)

_PRODUCT_STRONG: Final = _rx(
    r"\bв\s+наличии\b|\bналичи[ея]\b|\bсколько\s+(?:\w+\s+)?стои\w*|\bсколько\s+будет\s+стоить\b|\bпочем\b",
    r"\bпо\s+чем\b|\bцен(?:а|ы|у|е|ой|ам|ник\w*)\b|\bстоимост\w*|\bпрайс\w*",
    r"\bкупить\b|\bкуплю\b|\bприобрест\w*|\bзаказать\s+(?!звонок|обратн)\w+|\bзакажу\b",
    r"\bподбер\w*|\bподобрат\w*|\bподбор\w*|\bартикул\w*|\bкаталог\w*|\bассортимент\w*|\bаналог\w*",
    r"\bхарактеристик\w*|\bпрода(?:ете|ются|ется|ет)\b|\bторгуете\b|\bв\s+продаже\b",
    r"\bхочу\s+(?:купить|заказать|приобрести|взять)\b|\bhow\s+much\b|\bprice\w*|\bbuy\b|\bin\s+stock\b"
    r"|\bdo\s+you\s+(?:have|sell)\b",
)
_PRODUCT_SOFT: Final = _rx(
    r"^\s*есть\s+(?!ли\b)\w+|\bхочу\s+(?!чтобы\b)(?!\w+(?:ть|ться)\b)\w+",
    r"\bесть\s+ли\b|\bесть\s+у\s+вас\b|\bу\s+вас\s+есть\b|\bищу\s+\w+|\bнуж(?:ен|на|ны)\s+\w+",
    r"\bпосоветуйте\b|\bпорекомендуйте\b|\bмодел(?:ь|и|ей)\b|\bразмер(?:ы|ов)?\b|\bв\s+как\w+\s+цвет\w*",
)
# Topics that are about the company, not its goods: they stay questions for retrieval.
_SERVICE: Final = _rx(
    r"\bскидк\w*|\bакци\w*|\bпромокод\w*|\bбонус\w*|\bофис\w*|\bмагазин\w*|\bфилиал\w*|\bадрес\w*|\bтелефон\w*",
    r"\bконтакт\w*|\bсайт\w*|\bприложени\w*|\bпарковк\w*|\bваканси\w*|\bработ\w*|\bграфик\w*|\bвыходн\w*",
    r"\bкабинет\w*|\bаккаунт\w*|\bрегистрац\w*|\bпарол\w*|\bлогин\w*|\bдоговор\w*|\bдокумент\w*|\bлиценз\w*",
    r"\bвопрос\w*|\bпомощ\w*|\bпроблем\w*|\bошибк\w*|\bкомпани\w*|\bреквизит\w*|\bсумм\w*|\bуслови\w*",
    r"\bправил\w*|(?<!на\s)(?<!под\s)\bзаказ\w*|\bжалоб\w*|\bпретензи\w*",
)
# Documents for goods (a manual, a data sheet, a warranty card): knowledge to search, not goods to
# show, unless the same message asks to buy or for a price (_PRODUCT_STRONG wins: «купить
# руководство по ремонту»). «чехол для паспорта» is a product: a passport only counts as a
# document of something («паспорт на котёл», «технический паспорт»).
_DOCUMENTS: Final = _rx(
    r"\bинструкци\w*|\bруководств\w*|\bмануал\w*|\bдокументаци\w*|\bтехпаспорт\w*|\bтехническ\w*\s+паспорт\w*",
    r"\bпаспорт\w*\s+(?:к|на|для|от|издели\w*|товар\w*|прибор\w*|устройств\w*|оборудовани\w*)\b",
    r"\bгарантийн\w*\s+(?:талон\w*|карт\w*)|\bсертификат\w*\s+(?:соответстви\w*|качеств\w*)",
    r"\bсхем\w*\s+(?:подключени\w*|сборки|установки|монтажа)|\bинструктаж\w*",
    r"\bmanuals?\b|\buser\s+guides?\b|\bdata\s*sheets?\b|\binstructions?\b|\bwarranty\s+card\b",
)
_STOP_WORDS: Final = frozenset(
    "как какой какая какое какие каких каким какую каком что чем чего чему где куда откуда когда почему "
    "зачем кто кого кому ли можно нельзя нужно надо сколько подскажите скажите расскажите помогите "
    "объясните я мне меня мы нам нас вы вас вам ты тебя тебе мой моя мое мои ваш ваша ваше ваши не нет да "
    "ок если это этот эта эти так тоже вообще просто хочу могу может можете будет был была было были "
    "есть бы же ну а и или но ладно хорошо нормально понятно ясно круто отлично окей ага угу супер класс норм блин ой "
    "what how where when why who is are do does can i you".split()
)
_NEUTRAL_WORDS: Final = frozenset("пожалуйста пжл плиз please".split())
_LONE_PERSON: Final = re.compile(rf"(?:{_ROLE})\w{{0,3}}|поддержк\w*|техподдержк\w*", re.IGNORECASE)
_VERB_ENDING: Final = re.compile(r"(?:ться|тся|ешь|ишь|йте|ите|ете|ются|ятся)$|^\w{3,}(?:ить|ять|еть|уть|ыть|ать)$")
_NOUNS_LIKE_VERBS: Final = frozenset("кровать печать тетрадь скатерть десять девять опять благодать".split())
_WORD: Final = re.compile(r"[\w-]+")


def _normalize(text: str) -> str:
    return _PUNCT.sub(" ", text.translate(_YO))


def _is_bare_noun_phrase(body: str) -> bool:
    """A short phrase with no question word, pronoun or verb: "трековые светильники",
    "костюм для менеджера". People type catalogue searches into the chat this way."""
    words = [w for w in _WORD.findall(body.lower()) if w not in _NEUTRAL_WORDS]
    if not 1 <= len(words) <= 6 or any(w in _STOP_WORDS for w in words):
        return False
    if len(words) == 1 and _LONE_PERSON.fullmatch(words[0]):
        return False  # "оператор" alone: let the model decide, never the catalogue
    return not any(_VERB_ENDING.search(w) and w not in _NOUNS_LIKE_VERBS for w in words)


def _is_product(body: str) -> bool:
    if _PRODUCT_STRONG.search(body):
        return True
    if _SERVICE.search(body) or _DOCUMENTS.search(body):
        return False
    return bool(_PRODUCT_SOFT.search(body)) or _is_bare_noun_phrase(body)


def is_document_request(text: str) -> bool:
    """The visitor asks for a document of a product («инструкция к пылесосу», «паспорт на котёл»),
    not to buy it or for its price: the answer is in the knowledge, never in product cards. The
    chain uses it to refuse a model that raises such a question to the product route."""
    body = _normalize(text[:_MAX_CHARS])
    return bool(_DOCUMENTS.search(body)) and not _PRODUCT_STRONG.search(body)


def _purchase_topic(body: str) -> Topic:
    """The topic named first in the message wins ("можно оплатить курьеру?" is about payment,
    "доставка оплачивается отдельно?" about delivery); equal positions fall back to list order."""
    found: list[tuple[int, int, Topic]] = []
    for rank, (topic, pattern) in enumerate(_PURCHASE):
        match = pattern.search(body)
        if match:
            found.append((match.start(), rank, topic))
    return min(found)[2] if found else ""


def classify(text: str) -> Intent:
    """Decide the intent of one visitor message without any model."""
    norm = _normalize(text[:_MAX_CHARS])
    greeting = _GREETING_PREFIX.match(norm)
    start = greeting.end() if greeting else 0
    body, rest = norm[start:], text[start:].strip()

    if _WHOAMI.search(body):
        return Intent("whoami", rest=rest)
    if _OPERATOR.search(body) and not _ABOUT_PEOPLE.search(body):
        return Intent("operator", rest=rest)
    if _ORDER.search(body):
        return Intent("order", rest=rest)
    if not body.strip():
        return Intent("greeting" if greeting else "question")
    if _THANKS_ONLY.match(body):
        return Intent("thanks")

    thanks = _THANKS_PREFIX.match(body)
    if thanks:
        start += thanks.end()
        body, rest = norm[start:], text[start:].strip()
    if _READ.search(body):
        return Intent("read", rest=rest)
    topic = _purchase_topic(body)
    if topic:
        return Intent("purchase", topic=topic, rest=rest)
    if _is_product(body):
        return Intent("product", rest=rest)
    return Intent("question", rest=rest)
