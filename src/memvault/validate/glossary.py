"""A team's everyday vocabulary across memvault's languages, for ``validate``: Portuguese,
Russian and Ukrainian lemmas (and English synonyms) mapped to one English word, so a
statement in one language meets a fact written in another on its content words ("бэкапы
базы данных хранятся" ~ "database backups are kept").

Only words teams use for what they record about their systems and process; the slots that
decide (names, numbers, units, weekdays, permission) are language-independent already.
"""

from __future__ import annotations

# English word: its other forms, separated by spaces (lemmas; inflected forms go through
# memvault.language's lemmatiser first).
_GLOSSARY = {
    "keep": "retain retained kept store stored hold preserve guardar guardado manter "
    "armazenar reter conservar arquivar arquivado хранить храниться держать сохранять "
    "зберігати зберігатися",
    "main": "primary principal основной главный основний головний",
    "application": "app aplicação aplicativo приложение застосунок додаток",
    # (Portuguese "banco" alone is also a bank; in a team's notes it is mostly the database)
    "database": "db banco база",
    "data": "dado dados данные данный дані",
    "pullrequest": "pr prs mr",
    "production": "prod produção продакшн продакшен прод",
    "deploy": "deployment implantação implantar деплой деплоить развертывание развернуть "
    "выкатка выкатывать розгортання розгортати викатка",
    "release": "lançamento lançar релиз выпуск реліз випуск",
    "timeout": "тайм-аут таймаут",
    "backup": "бэкап бекап резервный резервний",
    "cache": "кэш кеш",
    "limit": "limite лимит ограничение ліміт обмеження",
    "queue": "fila очередь черга",
    "message": "mensagem сообщение повідомлення",
    "build": "compilação сборка собирать собираться збірка збирати збиратися",
    "connection": "conexão соединение подключение з'єднання підключення",
    "team": "time equipe команда",
    "request": "requisição solicitação pedido запрос запит",
    "response": "resposta respond responder ответ отвечать відповідь відповідати",
    "key": "chave ключ",
    "public": "público pública публичный публічний",
    "internal": "interno interna внутренний внутрішній",
    "branch": "ramo ветка гілка",
    "service": "serviço сервис служба сервіс",
    "payment": "pagamento платеж платёж оплата платіж",
    "provider": "provedor fornecedor провайдер поставщик постачальник",
    "call": "chamada chamado вызов виклик",
    "latency": "latência задержка латентность затримка латентність",
    "target": "goal meta objetivo alvo цель ціль",
    "search": "busca buscar pesquisa поиск пошук",
    "product": "produto товар продукт",
    "job": "task tarefa задача задание завдання",
    "review": "revisão ревью рев'ю",
    "merge": "mesclar мерж мердж",
    "test": "teste testar тест тестирование тестування",
    "coverage": "cobertura покрытие покриття",
    "code": "código код",
    "engineer": "engenheiro инженер інженер",
    "incident": "incidente инцидент інцидент",
    "oncall": "plantão дежурство дежурный чергування черговий",
    "rotation": "rodízio escala ротация ротація",
    "upload": "envio загрузка завантаження",
    "attachment": "anexo вложение вкладення",
    "size": "tamanho размер розмір",
    "password": "senha пароль",
    "character": "caractere символ",
    "token": "токен",
    "expire": "expirar истекать истечь спливати",
    "support": "suporte поддержка підтримка",
    "assistant": "assistente ассистент помощник асистент помічник",
    "monitoring": "monitoramento мониторинг моніторинг",
    "alert": "alerta alertar алерт оповещение",
    "secret": "segredo секрет",
    "commit": "commitar коммит коммитить коміт комітити",
    "migration": "migração миграция міграція",
    "schema": "esquema схема",
    "budget": "orçamento бюджет",
    "cloud": "nuvem облако облачный хмара хмарний",
    "monthly": "mensal ежемесячный месячный щомісячний місячний",
    "email": "e-mail почта письмо пошта",
    "documentation": "docs documentação документация документація",
    "region": "região регион регіон",
    "staging": "stage homologação стейджинг стейдж",
    "standup": "стендап дейли",
    "daily": "diário ежедневный щоденний",
    "sprint": "спринт",
    "retrospective": "retrospectiva retrospectivo ретроспектива",
    "mobile": "móvel celular мобильный мобільний",
    "analytics": "análise аналитика аналитик аналітика аналітик",
    "rule": "regra правило",
    "window": "janela окно вікно",
    "time": "tempo время час",
    "send": "enviar отправлять надсилати",
    "notification": "notificação уведомление сповіщення",
    "invoice": "fatura faturar счет рахунок",
    "billing": "faturamento cobrança биллинг білінг",
    "user": "usuário пользователь користувач",
    "customer": "cliente клиент клієнт",
    "session": "sessão сессия сесія",
    "broker": "брокер",
    "version": "versão версия версія",
    "frontend": "фронтенд",
}
GLOSSARY: dict[str, str] = {
    word: english for english, words in _GLOSSARY.items() for word in words.split()
}
# English words read as themselves in English text: one that is another language's form too
# ("time", Portuguese for "team"; "stage", Portuguese for "staging") is that only outside it.
ENGLISH = frozenset(_GLOSSARY) | {"stage"}  # "the build stage" is no staging


def gloss(word: str, lang: str) -> str | None:
    """The English word the glossary reads ``word`` (a lower-case form or lemma) of text in
    ``lang`` as, None if it has none; an English word in English text is itself."""
    if lang == "en" and word in ENGLISH:
        return None
    return GLOSSARY.get(word)
