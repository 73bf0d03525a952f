from django.urls import path

from messengers import views

app_name = "messengers"

urlpatterns = [
    path("telegram/<str:key>/", views.telegram_update, name="telegram"),
    path("vk/<str:key>/", views.vk_update, name="vk"),
    path("max/<str:key>/", views.max_update, name="max"),
    path("operator/", views.operator_page, name="operator"),
]
