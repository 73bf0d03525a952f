"""Russian: a day and its month take the month in the genitive, lower case, «26 октября» (Django's
own "j F" gives «26 Октябрь»). Charts' week and day labels use it (feedback/outcomes.py, usage)."""

MONTH_DAY_FORMAT = "j E"
