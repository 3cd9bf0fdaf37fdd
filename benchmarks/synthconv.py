"""Synthetic multi-session conversations in en / ru / zh (and es / de) with known evidence turns (code, no model).

    python benchmarks/synthconv.py --out /work/cache/synth/eval.json --seed 0
    python benchmarks/synthconv.py --out /work/cache/synth/latin.json --seed 0 --langs en,es,de
    python benchmarks/synthconv.py --out /work/cache/synth/train.json --seed 1   # for train_reranker.py

Two chat styles per language, so a ranker tuned on one kind of data meets the other:

* ``chat``: two named friends, short turns (LoCoMo-like). Facts are planted in one speaker's turn;
  the same kind of fact is said by the other speaker with another value (a speaker question must
  pick the right one) or in another month (a temporal question, "in May 2024" / "в мае 2024" /
  "2024年5月", must pick the right month). Small talk around them reuses the facts' vocabulary.
* ``assistant``: a user and an assistant; long, wordy user turns (the fact inside three to five
  sentences of filler) and long assistant replies. Each session has a theme (a trip, a renovation,
  a job hunt, ...), several sessions share a theme with another value, and half of the questions
  are session-level ("what did we discuss about my trip to Kyoto?"): the gold is the session.

Questions paraphrase their evidence (other words than the planted turn) and name the value or the
theme only where a user would. A Russian past-tense verb agrees with its speaker (``[получила|получил]``
in a template, resolved by ``agree``), and a question about oneself is written for the first person (a
fact's fifth element), not made by putting "я" in the name's place. Output (JSON, kept outside the repo)::

    {"conversations": [{"id", "lang", "style", "sessions": [{"id", "date", "turns": [{"speaker", "role", "text"}]}]}],
     "questions": [{"conv", "question", "date", "kind", "evidence": [[session, turn], ...], "sessions": [session, ...]}]}

``retrieval_general.py`` reads this format (and LongMemEval's, converted on load).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _synthconv_latin as latin  # noqa: E402

LANGS = ("en", "ru", "zh")
NAMES = {"en": ["Anna", "Boris", "Clara", "David", "Elena", "Frank", "Grace", "Henry"],
         "ru": ["Анна", "Борис", "Вера", "Глеб", "Дарья", "Егор", "Жанна", "Илья"],
         "zh": ["王芳", "李强", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄磊"]}
MONTHS = {"en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
          "ru": ["январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе", "сентябре", "октябре", "ноябре", "декабре"]}

# Facts: (statement variants with {v}, question naming {s} the speaker, values, small talk sharing the vocabulary)
FACTS = {
    "en": [
        (["We finally brought home a little {v} puppy from the shelter!", "Guess what, there is a {v} puppy sleeping on my couch now, we adopted him."],
         "What breed of dog did {s} adopt?", ["beagle", "corgi", "husky", "poodle", "dachshund"], ["My neighbour's dog barked all night again.", "Dogs at the park are always so happy."]),
        (["I've been taking {v} lessons every Tuesday evening.", "Started learning to play the {v} with a teacher, twice a week."],
         "Which instrument is {s} studying?", ["piano", "violin", "guitar", "cello", "drums"], ["There was a street musician near the station today.", "That concert hall downtown is being renovated."]),
        (["We're moving to {v} in the autumn, the new job is there.", "The relocation is settled: {v} from October."],
         "Which city is {s} relocating to?", ["Lisbon", "Toronto", "Melbourne", "Vienna", "Osaka"], ["Packing boxes are the worst part of any move.", "My cousin changed cities twice last year."]),
        (["My sister just had a baby girl, they named her {v}.", "Little {v} was born on Sunday, I'm an aunt now!"],
         "What is the name of {s}'s niece?", ["Mila", "Sophie", "Ava", "Nora", "Lily"], ["Babies change everything about your sleep.", "My sister always wanted a big family."]),
        (["I ran my first {v} last weekend, legs still hurt.", "Crossed the finish line of the {v} in under my target time!"],
         "What race did {s} complete?", ["half marathon", "marathon", "10k", "triathlon", "ultramarathon"], ["Running in this heat is impossible.", "I bought new sneakers but they squeak."]),
        (["I've switched to a {v} diet for a month as an experiment.", "No meat, no dairy: I'm trying a {v} diet now."],
         "What eating plan is {s} following?", ["vegan", "keto", "paleo", "vegetarian", "mediterranean"], ["That new bakery has amazing bread.", "I cooked pasta three times this week."]),
        (["Got a new job as a {v} at a startup.", "Signed the offer yesterday, I'll be working as a {v}."],
         "What position did {s} accept?", ["data analyst", "nurse", "architect", "teacher", "chef"], ["Mondays at work are always chaos.", "My boss finally approved the holidays."]),
        (["We spent the holidays hiking in {v}, the views were unreal.", "Just back from a week of trekking in {v}."],
         "Where did {s} go hiking?", ["Patagonia", "Nepal", "Iceland", "the Alps", "Scotland"], ["My boots are falling apart after that trail.", "Mountains make me feel tiny."]),
    ],
    "ru": [
        (["Мы наконец забрали из приюта щенка породы {v}!", "Представляешь, у меня на диване теперь спит щенок, {v}, мы его взяли."],
         "Какую собаку [завела|завёл] {s}?", ["бигль", "корги", "хаски", "пудель", "такса"], ["Соседская собака опять лаяла всю ночь.", "В парке собаки всегда такие счастливые."],
         "Какую собаку я [завела|завёл]?"),
        (["Я каждый вторник вечером хожу на уроки: {v}.", "[Начала|Начал] учиться играть, инструмент {v}, с педагогом два раза в неделю."],
         "На каком инструменте учится играть {s}?", ["фортепиано", "скрипка", "гитара", "виолончель", "барабаны"], ["У вокзала сегодня играл уличный музыкант.", "Концертный зал в центре закрыли на ремонт."],
         "На каком инструменте я учусь играть?"),
        (["Осенью переезжаем, город {v}, новая работа там.", "С переездом решено: {v}, с октября."],
         "В какой город переезжает {s}?", ["Лиссабон", "Торонто", "Мельбурн", "Вена", "Осака"], ["Коробки для переезда — худшая часть.", "Мой кузен в прошлом году дважды менял город."],
         "В какой город я переезжаю?"),
        (["У сестры родилась дочка, назвали {v}.", "Малышка {v} родилась в воскресенье, я теперь [тётя|дядя]!"],
         "Как зовут племянницу {sg}?", ["Мила", "Софья", "Ева", "Нора", "Лиля"], ["Дети меняют всё, особенно сон.", "Сестра всегда хотела большую семью."],
         "Как зовут мою племянницу?"),
        (["В выходные [пробежала|пробежал] свой первый забег: {v}, ноги до сих пор болят.", "[Финишировала|Финишировал], {v}, быстрее, чем [планировала|планировал]!"],
         "Какую дистанцию [пробежала|пробежал] {s}?", ["полумарафон", "марафон", "десятка", "триатлон", "ультрамарафон"], ["Бегать в такую жару невозможно.", "[Купила|Купил] новые кроссовки, а они скрипят."],
         "Какую дистанцию я [пробежала|пробежал]?"),
        (["Ради эксперимента на месяц [перешла|перешёл] на диету: {v}.", "Без мяса и молочного: теперь у меня {v}."],
         "Какого питания придерживается {s}?", ["веганство", "кето", "палео", "вегетарианство", "средиземноморская"], ["В новой пекарне потрясающий хлеб.", "На этой неделе трижды [варила|варил] пасту."],
         "Какого питания я придерживаюсь?"),
        (["[Устроилась|Устроился] на новую работу в стартап, должность {v}.", "Вчера [подписала|подписал] оффер, буду работать: {v}."],
         "Какую должность [получила|получил] {s}?", ["аналитик данных", "медсестра", "архитектор", "учитель", "шеф-повар"], ["По понедельникам на работе хаос.", "Начальник наконец подписал отпуск."],
         "Какую должность я [получила|получил]?"),
        (["Праздники провели в походе, {v}, виды нереальные.", "Только [вернулась|вернулся] из недельного трекинга: {v}."],
         "Где [ходила|ходил] в поход {s}?", ["Патагония", "Непал", "Исландия", "Альпы", "Шотландия"], ["Ботинки развалились после той тропы.", "В горах чувствуешь себя крошечным."],
         "Где я [ходила|ходил] в поход?"),
    ],
    "zh": [
        (["我们终于从收容所领养了一只{v}小狗!", "你猜怎么着,我家沙发上现在睡着一只{v},我们收养的。"],
         "{s}领养了什么品种的狗?", ["比格犬", "柯基", "哈士奇", "贵宾犬", "腊肠犬"], ["邻居家的狗又叫了一整夜。", "公园里的狗总是那么开心。"]),
        (["我每周二晚上去上{v}课。", "开始跟老师学{v}了,一周两次。"],
         "{s}在学什么乐器?", ["钢琴", "小提琴", "吉他", "大提琴", "架子鼓"], ["今天车站附近有个街头艺人。", "市中心的音乐厅在装修。"]),
        (["秋天我们要搬到{v},新工作在那里。", "搬家定了:十月起去{v}。"],
         "{s}要搬到哪个城市?", ["里斯本", "多伦多", "墨尔本", "维也纳", "大阪"], ["打包箱子是搬家最烦的部分。", "我表哥去年换了两次城市。"]),
        (["我姐姐刚生了个女儿,取名叫{v}。", "小{v}星期天出生了,我当阿姨了!"],
         "{s}的外甥女叫什么名字?", ["米拉", "索菲", "艾娃", "诺拉", "莉莉"], ["有了孩子睡觉就全变了。", "我姐姐一直想要个大家庭。"]),
        (["上周末我跑完了人生第一个{v},腿还在疼。", "冲过了{v}的终点,比目标时间还快!"],
         "{s}完成了什么比赛?", ["半程马拉松", "全程马拉松", "十公里跑", "铁人三项", "超级马拉松"], ["这么热根本没法跑步。", "新买的跑鞋走路会响。"]),
        (["我试着吃一个月{v}饮食。", "不吃肉也不吃奶制品:我现在是{v}饮食。"],
         "{s}在遵循什么饮食?", ["纯素", "生酮", "原始人", "素食", "地中海"], ["新开的面包店面包超好吃。", "这周我做了三次意面。"]),
        (["我在一家创业公司找到了新工作,职位是{v}。", "昨天签了录用通知,我要做{v}了。"],
         "{s}接受了什么职位?", ["数据分析师", "护士", "建筑师", "老师", "厨师"], ["每到周一公司就一团乱。", "老板终于批了我的假。"]),
        (["假期我们去{v}徒步了,风景美得不真实。", "刚从{v}徒步一周回来。"],
         "{s}去哪里徒步了?", ["巴塔哥尼亚", "尼泊尔", "冰岛", "阿尔卑斯山", "苏格兰"], ["那条路走完我的靴子都坏了。", "在山里觉得自己好渺小。"]),
    ],
}

# Session themes (assistant style): user turns about {v}, a session-level question, values.
THEMES = {
    "en": [
        (["I'm planning a trip to {v} next spring and I keep going back and forth on where to stay.", "For the {v} trip, should I get a rail pass or just buy tickets as I go?", "What neighbourhoods in {v} would you avoid for a first visit?"],
         "What did we discuss about my trip to {v}?", ["Kyoto", "Lisbon", "Istanbul", "Buenos Aires", "Prague"]),
        (["We're renovating the {v} and the contractor quoted way more than expected.", "Do you think tiles or vinyl would hold up better in the {v}?", "The {v} renovation is dragging on, how do I keep the contractor on schedule?"],
         "What advice did you give me about renovating the {v}?", ["kitchen", "bathroom", "attic", "basement", "balcony"]),
        (["I have an interview for a {v} role next week and I'm nervous about the technical part.", "How should I answer salary questions for a {v} position?", "Can you help me prepare stories for the {v} interview?"],
         "How did you help me prepare for the {v} job interview?", ["product manager", "backend developer", "UX designer", "sales lead", "data scientist"]),
        (["I want to start growing {v} on my balcony but I have no idea about soil.", "My {v} seedlings look yellow, am I overwatering?", "When is the right time to harvest the {v}?"],
         "What did you tell me about growing {v}?", ["tomatoes", "strawberries", "basil", "peppers", "cucumbers"]),
    ],
    "ru": [
        (["Планирую весной поездку, город {v}, и никак не решу, где жить.", "Для поездки в {v} брать проездной или покупать билеты на месте?", "Каких районов {v} лучше избегать в первый раз?"],
         "Что мы обсуждали про мою поездку в {v}?", ["Киото", "Лиссабон", "Стамбул", "Буэнос-Айрес", "Прагу"]),
        (["У нас ремонт, помещение: {v}, и подрядчик насчитал гораздо больше, чем ожидали.", "Плитка или винил лучше выдержит, если это {v}?", "Ремонт ({v}) затягивается, как удержать подрядчика в сроках?"],
         "Что ты советовал про ремонт, помещение {v}?", ["кухня", "ванная", "мансарда", "подвал", "балкон"]),
        (["На следующей неделе собеседование, позиция {v}, волнуюсь из-за технической части.", "Как отвечать на вопросы о зарплате на позицию {v}?", "Поможешь подготовить истории для собеседования ({v})?"],
         "Как ты помогал мне готовиться к собеседованию, позиция {v}?", ["продакт-менеджер", "бэкенд-разработчик", "UX-дизайнер", "руководитель продаж", "дата-сайентист"]),
        (["Хочу выращивать на балконе: {v}, но ничего не понимаю в грунте.", "Рассада ({v}) желтеет, я переливаю?", "Когда собирать урожай, если это {v}?"],
         "Что ты рассказывал мне про выращивание, культура {v}?", ["помидоры", "клубника", "базилик", "перец", "огурцы"]),
    ],
    "zh": [
        (["我计划明年春天去{v}旅行,一直拿不定主意住哪里。", "去{v}旅行应该买通票还是随时买票?", "第一次去{v}应该避开哪些街区?"],
         "我们聊过我去{v}旅行的什么?", ["京都", "里斯本", "伊斯坦布尔", "布宜诺斯艾利斯", "布拉格"]),
        (["我们在装修{v},包工头的报价比预期高很多。", "你觉得{v}用瓷砖还是地板革更耐用?", "{v}装修一直拖着,怎么让包工头按时完工?"],
         "关于装修{v}你给过我什么建议?", ["厨房", "浴室", "阁楼", "地下室", "阳台"]),
        (["下周我有一个{v}职位的面试,技术部分让我很紧张。", "面试{v}职位时怎么回答薪资问题?", "你能帮我准备{v}面试的故事吗?"],
         "你是怎么帮我准备{v}面试的?", ["产品经理", "后端开发", "用户体验设计师", "销售主管", "数据科学家"]),
        (["我想在阳台上种{v},但对土壤一窍不通。", "我的{v}幼苗发黄了,是浇水太多了吗?", "什么时候收{v}合适?"],
         "关于种{v}你跟我说过什么?", ["西红柿", "草莓", "罗勒", "辣椒", "黄瓜"]),
    ],
}

FILLER = {
    "en": ["Honestly the week has been a blur.", "Work kept me late almost every day.", "The weather keeps flipping between rain and sun.",
           "I finally cleaned the whole flat on Saturday.", "My phone battery dies before lunch these days.", "We watched a documentary about whales.",
           "Coffee is the only thing keeping me going.", "The traffic this morning was unbelievable.", "I've been trying to sleep earlier.",
           "My parents visited and we cooked together.", "I keep forgetting to reply to messages.", "There's a new cafe on our street."],
    "ru": ["Честно, неделя пролетела как в тумане.", "Работа почти каждый день держала допоздна.", "Погода всё время меняется: то дождь, то солнце.",
           "В субботу наконец [убралась|убрался] во всей квартире.", "Телефон теперь садится ещё до обеда.", "Посмотрели документальный фильм про китов.",
           "Держусь только на кофе.", "Пробки утром были невероятные.", "Стараюсь ложиться спать пораньше.",
           "Приезжали родители, вместе готовили.", "Всё время забываю отвечать на сообщения.", "На нашей улице открылось новое кафе."],
    "zh": ["说实话这周过得稀里糊涂。", "几乎每天都加班到很晚。", "天气一会儿下雨一会儿出太阳。", "周六我终于把整个屋子打扫了一遍。",
           "最近手机不到中午就没电了。", "我们看了一部关于鲸鱼的纪录片。", "全靠咖啡撑着。", "今天早上堵车太离谱了。", "我一直在努力早点睡。",
           "爸妈来看我,我们一起做饭。", "我老是忘记回消息。", "我们街上新开了一家咖啡馆。"],
}
REPLIES = {
    "en": ["That sounds like a lot, take it one step at a time.", "Good question; it depends on your budget and how much time you have.",
           "Here is what I would consider first: cost, timing and what matters most to you.", "Many people in your situation start small and adjust later."],
    "ru": ["Звучит непросто, двигайтесь по шагам.", "Хороший вопрос; всё зависит от бюджета и времени.",
           "Вот что я бы взвесил первым делом: цену, сроки и что для вас важнее.", "Многие в такой ситуации начинают с малого и потом корректируют."],
    "zh": ["听起来事情不少,一步一步来。", "好问题;这取决于你的预算和时间。", "我会先考虑这几点:费用、时间以及你最看重什么。", "很多人在这种情况下先从小处着手,之后再调整。"],
}
QUESTION_TEMPORAL = {"en": "{q} (in {m} {y})", "ru": "{q} (в {m} {y})", "zh": "{y}年{mi}月,{q}"}
# Russian past-tense verbs agree with the speaker: "[пробежала|пробежал]" is resolved per speaker.
MALE = {"Борис", "Глеб", "Егор", "Илья"}
GENITIVE = {"Анна": "Анны", "Борис": "Бориса", "Вера": "Веры", "Глеб": "Глеба", "Дарья": "Дарьи", "Егор": "Егора",
            "Жанна": "Жанны", "Илья": "Ильи"}
_FORMS = re.compile(r"\[([^|\]]*)\|([^|\]]*)\]")


def agree(text: str, speaker: str) -> str:
    """``text`` with each ``[feminine|masculine]`` pair resolved for ``speaker``."""
    return _FORMS.sub(lambda m: m.group(2 if speaker in MALE else 1), text)
QUESTION_SELF = {"en": ("{s}", "I", "my"), "ru": ("{s}", "я", "моя"), "zh": ("{s}", "我", "我")}


for _table, _more in ((NAMES, latin.NAMES), (MONTHS, latin.MONTHS), (FACTS, latin.FACTS), (THEMES, latin.THEMES),
                      (FILLER, latin.FILLER), (REPLIES, latin.REPLIES), (QUESTION_TEMPORAL, latin.QUESTION_TEMPORAL)):
    _table.update(_more)  # Spanish and German (--langs): their own module


def _date(base: datetime, session: int, rng: random.Random) -> datetime:
    return base + timedelta(days=session * rng.randint(9, 16), hours=rng.randint(8, 20))


def chat_conversation(lang: str, cid: str, rng: random.Random, n_sessions: int) -> tuple[dict, list[dict]]:
    a, b = rng.sample(NAMES[lang], 2)
    base = datetime(2024, 1, 3, tzinfo=timezone.utc)
    sessions = [{"id": f"{cid}-s{i}", "date": _date(base, i, rng).isoformat(), "turns": []} for i in range(n_sessions)]
    for s in sessions:  # small talk: filler and the facts' own small talk
        for t in range(rng.randint(8, 12)):
            pool = FILLER[lang] + [x for f in rng.sample(FACTS[lang], 2) for x in f[3]]
            speaker = (a, b)[t % 2]
            s["turns"].append({"speaker": speaker, "role": "user", "text": agree(rng.choice(pool), speaker)})
    questions = []
    for fi, (stmts, q, vals) in enumerate(f[:3] for f in FACTS[lang]):
        v1, v2 = rng.sample(vals, 2)
        who, other = (a, b) if rng.random() < 0.5 else (b, a)
        s1, s2 = rng.sample(range(n_sessions), 2)
        if abs(datetime.fromisoformat(sessions[s1]["date"]).month - datetime.fromisoformat(sessions[s2]["date"]).month) == 0:
            s2 = (s1 + 4) % n_sessions
        kind = ("speaker", "temporal", "plain")[fi % 3]
        spk2 = other if kind == "speaker" else who
        ev = []  # (session, the turn dict): positions are resolved once every fact is planted
        for si, spk, v in ((s1, who, v1), (s2, spk2, v2)):
            turns = sessions[si]["turns"]
            turn = {"speaker": spk, "role": "user", "text": agree(rng.choice(stmts).format(v=v), spk)}
            turns.insert(rng.randrange(1, len(turns)), turn)
            ev.append((si, turn))
        target = ev[0]
        question = agree(q.format(s=who, sg=GENITIVE.get(who, who)), who)
        if kind == "temporal":
            d = datetime.fromisoformat(sessions[s1]["date"])
            m = MONTHS[lang][d.month - 1] if lang in MONTHS else ""
            question = QUESTION_TEMPORAL[lang].format(q=question.rstrip("?？"), m=m, y=d.year, mi=d.month) + ("?" if lang != "zh" else "?")
        evidence = ev if kind == "plain" else [target]  # plain: the same speaker said it twice, both count
        questions.append({"conv": cid, "question": question, "kind": kind, "evidence": evidence,
                          "sessions": sorted({sessions[si]["id"] for si, _ in evidence})})
    for q in questions:
        q["evidence"] = [[si, next(i for i, t in enumerate(sessions[si]["turns"]) if t is turn)] for si, turn in q["evidence"]]
    last = datetime.fromisoformat(sessions[-1]["date"])
    for q in questions:
        q["date"] = (last + timedelta(days=3)).isoformat()
    return {"id": cid, "lang": lang, "style": "chat", "sessions": sessions}, questions


def assistant_conversation(lang: str, cid: str, rng: random.Random, n_sessions: int) -> tuple[dict, list[dict]]:
    user = rng.choice(NAMES[lang])
    base = datetime(2024, 2, 5, tzinfo=timezone.utc)
    sessions, questions = [], []
    themes = THEMES[lang]
    plan = [(ti, v) for ti in range(len(themes)) for v in rng.sample(themes[ti][2], 2)]
    rng.shuffle(plan)
    plan = plan[:n_sessions]
    facts = rng.sample(FACTS[lang], min(len(FACTS[lang]), n_sessions))
    for i, (ti, v) in enumerate(plan):
        sid = f"{cid}-s{i}"
        turns, theme_turns = [], []
        lines = list(themes[ti][0])
        rng.shuffle(lines)
        for j, line in enumerate(lines):
            pad = rng.sample(FILLER[lang], rng.randint(2, 4))
            pad.insert(rng.randrange(len(pad) + 1), line.format(v=v))
            theme_turns.append(len(turns))
            turns.append({"speaker": user, "role": "user", "text": agree(" ".join(pad), user)})
            turns.append({"speaker": "assistant", "role": "assistant", "text": " ".join(rng.sample(REPLIES[lang], 2))})
        stmts, fq, fvals = facts[i % len(facts)][:3]
        fv = rng.choice(fvals)
        pad = rng.sample(FILLER[lang], rng.randint(3, 5))
        pad.insert(rng.randrange(len(pad) + 1), rng.choice(stmts).format(v=fv))
        pos = rng.randrange(1, len(turns) + 1)
        pos -= pos % 2  # a user turn, before an assistant reply
        turns.insert(pos, {"speaker": user, "role": "user", "text": agree(" ".join(pad), user)})
        turns.insert(pos + 1, {"speaker": "assistant", "role": "assistant", "text": rng.choice(REPLIES[lang])})
        theme_turns = [t + 2 if t >= pos else t for t in theme_turns]
        sessions.append({"id": sid, "date": _date(base, i, rng).isoformat(), "turns": turns})
        me = {"en": "I", "ru": "я", "zh": "我", **latin.SELF}[lang]
        if len(facts[i % len(facts)]) > 4:  # a question about oneself of its own (the verb agrees with the person)
            fact_q = agree(facts[i % len(facts)][4], user)
        else:
            fact_q = fq.format(s=me) if lang != "en" else fq.format(s="I").replace("did I", "did I").replace("is I", "am I").replace("I's", "my")
        questions.append({"conv": cid, "question": fact_q, "kind": "fact", "evidence": [[i, pos]], "sessions": [sid]})
        questions.append({"conv": cid, "question": themes[ti][1].format(v=v), "kind": "session",
                          "evidence": [[i, t] for t in theme_turns], "sessions": [sid]})
    # a fact question is ambiguous when the same fact kind was planted twice: keep the first only
    seen, kept = set(), []
    for q in questions:
        if q["kind"] == "fact" and q["question"] in seen:
            continue
        seen.add(q["question"])
        kept.append(q)
    last = datetime.fromisoformat(sessions[-1]["date"])
    for q in kept:
        q["date"] = (last + timedelta(days=2)).isoformat()
    return {"id": cid, "lang": lang, "style": "assistant", "sessions": sessions}, kept


def generate(seed: int, per_style: int = 2, sessions: int = 10, langs: tuple[str, ...] = LANGS) -> dict:
    rng = random.Random(seed)
    convs, questions = [], []
    for lang in langs:
        for n in range(per_style):
            for style, fn in (("chat", chat_conversation), ("assistant", assistant_conversation)):
                c, qs = fn(lang, f"{lang}-{style}-{seed}-{n}", rng, sessions)
                convs.append(c)
                questions.extend(qs)
    return {"seed": seed, "conversations": convs, "questions": questions}


def main() -> None:
    from _common import save_set

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write the JSON (outside the repo, e.g. /work/cache/synth/eval.json)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-style", type=int, default=2, help="conversations per language and style")
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--langs", default=",".join(LANGS), help=f"comma list of {', '.join(LANGS + tuple(latin.SELF))}")
    args = ap.parse_args()
    data = generate(args.seed, args.per_style, args.sessions, tuple(x.strip() for x in args.langs.split(",")))
    save_set(data, args.out)


if __name__ == "__main__":
    main()
