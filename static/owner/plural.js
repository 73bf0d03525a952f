// A counted phrase in the page's language: `forms` is core/plurals.py's plural_forms() (the forms by
// Intl.PluralRules category, rendered by the server from the catalogs), "%(n)s" is the count.
window.spravkaPlural = function (forms, n) {
  "use strict";
  var lang = document.documentElement.lang || "ru";
  var category = window.Intl && Intl.PluralRules ? new Intl.PluralRules(lang).select(n) : (n === 1 ? "one" : "other");
  var form = forms[category] || forms.other || "";
  return form.replace("%(n)s", String(n));
};
