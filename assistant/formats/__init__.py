"""The project's corrections to Django's date formats (settings.FORMAT_MODULE_PATH): a name listed
here wins over Django's for that language; everything else stays Django's."""
