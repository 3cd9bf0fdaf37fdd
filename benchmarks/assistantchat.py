"""Long assistant chats with personal details said in passing (code, no model, no download).

    python benchmarks/assistantchat.py --out /work/cache/synth/assistant.json --seed 0

The shape of the chats a personal assistant keeps: one user, tens of sessions, each a task (an email
to write, a trip to plan, a bug to fix, ...) asked in long, wordy requests, answered at length. A
personal detail (a pet's name, the city one lives in, a partner's job) is mentioned once, in passing,
inside a request about something else; some details change later ("since we moved to Porto");
some events recur across sessions ("the dentist again"). Questions:

* ``fact``: "What is my cat called?": the session of the passing mention.
* ``update``: "Which city do I live in now?": the first mention and the update (both sessions).
* ``count``: "How many times did I go to the dentist?": every session that mentions one.

The trap for BM25 is the filler: requests share many words with each other and with the questions
("help", "week", "time", "remember"), while the detail is one clause. Gold is the set of sessions
(``session recall_all@k``: every gold session among the sessions of the top k); the evidence turns
are the user turns that state the detail. Output is ``synthconv.py``'s format, so
``retrieval_general.py`` and ``retrieval_lab.py`` read it.
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime, timedelta, timezone

NAMES = ["Maya", "Tom", "Priya", "Lukas", "Ines", "Omar", "Hana", "Jonas", "Sofia", "Daniel"]

# Tasks: (request openings, follow-up requests, reply sentences). {x} is a task detail.
TASKS = [
    (["Could you help me write an email to my landlord about {x}? I want it to sound firm but polite, and I never know how to start these things.",
      "I need to draft a message to the building manager regarding {x}, and I'd like some help with the wording because my first attempt sounded too angry."],
     ["Can you make the second paragraph shorter and a bit more friendly, but keep the part about the deadline?",
      "That's good, but could you add a line asking them to reply by the end of the week?"],
     ["Here is a draft that states the problem, the date it started and what you expect.", "Keep the tone factual and mention any earlier messages.",
      "A clear deadline helps, and so does offering a time when you are at home."],
     ["the broken heating", "the leaking window", "the noisy neighbours upstairs", "the deposit refund", "the mould in the bathroom"]),
    (["I'm trying to plan a weekly workout routine around {x} and I honestly don't know how to balance it with work, can you suggest something realistic?",
      "Could you put together a training plan for {x}? I have maybe four evenings a week and I get bored quickly, so variety would help."],
     ["What should I do on the days when I feel too tired to train properly?", "Is it okay to skip the warm-up if I'm short on time?"],
     ["Start with three sessions a week and add a fourth after a month.", "Alternate harder and easier days so you recover.",
      "On tired days a short walk or mobility work still counts."],
     ["running a 10k", "building strength", "swimming twice a week", "cycling to work", "climbing at the gym"]),
    (["My Python script for {x} keeps failing with a KeyError and I've been staring at it for an hour, could you help me figure out what is going on?",
      "I wrote a small program to handle {x}, but it's really slow on big files, do you have any idea how I could speed it up?"],
     ["I tried your suggestion but now it prints nothing at all, what else could be wrong?", "Could you explain what the dictionary get method does differently?"],
     ["Print the keys right before the failing line to see what is actually there.", "Reading the file once and keeping it in a dictionary avoids the repeated work.",
      "Use get with a default when a key may be missing."],
     ["parsing invoices", "renaming photos", "merging spreadsheets", "cleaning a CSV export", "sending reminders"]),
    (["I'm hosting a dinner for {x} next weekend and I'd love some menu ideas that don't keep me in the kitchen the whole evening.",
      "Can you suggest a recipe plan for {x}? I want something impressive but I'm not a great cook and I'll be short on time."],
     ["What could I prepare the day before so that I'm not stressed?", "Do you have a simple dessert idea that works with that menu?"],
     ["A slow-cooked main frees you while guests arrive.", "Prepare the sauce and the dessert a day ahead.", "Keep starters cold so you can plate them early."],
     ["six friends", "my colleagues", "my parents' anniversary", "a birthday", "new neighbours"]),
    (["Could you help me set up a monthly budget? Lately {x} has been eating into my savings and I want a clearer picture of where the money goes.",
      "I want to build a spreadsheet to track spending because {x} keeps surprising me at the end of every month."],
     ["How much should I realistically keep as an emergency fund?", "Should I track cash payments too or is that overkill?"],
     ["List fixed costs first, then variable ones, then savings.", "Three months of expenses is a common emergency target.",
      "A weekly check-in keeps the numbers honest."],
     ["eating out", "online shopping", "subscriptions", "car repairs", "travel"]),
    (["I'm putting together an itinerary for {x} and I keep changing my mind about how many days to spend in each place, could you help me structure it?",
      "Can you help me plan {x}? I want a relaxed pace with some free afternoons, not a checklist of sights."],
     ["What is the best way to get from the airport to the centre without a car?", "Should I book museums in advance or is that unnecessary?"],
     ["Two or three nights per stop keeps the trip relaxed.", "Book the popular museums ahead, the rest on the day.",
      "Leave one afternoon free in each city."],
     ["a week in Portugal", "a long weekend in Rome", "a road trip through Scotland", "ten days in Japan", "a rail trip across Austria"]),
    (["I started learning {x} a while ago and I feel stuck, could you suggest a study routine that fits into half an hour a day?",
      "What are some good ways to practise {x} when I don't have anyone to speak with? I get bored with apps."],
     ["How do I stop forgetting new vocabulary after a few days?", "Is it worth paying for a tutor at my level?"],
     ["Short daily practice beats long weekly sessions.", "Spaced repetition keeps words from fading.", "Reading aloud helps with speaking when no partner is around."],
     ["Spanish", "German", "Japanese", "Italian", "Portuguese"]),
    (["Can you help me write a cover letter for a {x} position? I always end up listing my duties and it sounds really flat.",
      "I'm applying for a job as a {x} and I'd like feedback on how to describe my experience without exaggerating."],
     ["Could you make the opening sentence less generic?", "How long should the letter be?"],
     ["Open with why this role, then one concrete achievement.", "Keep it under a page.", "Show results with numbers where you can."],
     ["project coordinator", "junior designer", "marketing assistant", "lab technician", "customer success manager"]),
    (["I need gift ideas for {x}; I always leave it to the last minute and end up buying something boring.",
      "Could you suggest a few thoughtful presents for {x}? Budget is around fifty euros."],
     ["What if they already have everything?", "Is an experience better than a physical gift?"],
     ["Think about a hobby they mention often.", "An experience they can share with you is often remembered longer.", "A small personal touch matters more than the price."],
     ["my brother's birthday", "my manager who is leaving", "my best friend's wedding", "my grandmother", "a colleague's baby shower"]),
    (["Could you help me edit an essay about {x}? The argument is there but the paragraphs feel disconnected.",
      "I wrote a short article on {x} for a community newsletter and I'd like help making it flow better."],
     ["Can you suggest a stronger conclusion?", "Is my introduction too long?"],
     ["Each paragraph should open with the point it makes.", "Link paragraphs with the question the next one answers.", "End on what the reader should take away."],
     ["urban gardening", "remote work", "public libraries", "cycling infrastructure", "local history"]),
    (["My car has been making {x} and I want to understand what to ask the mechanic so I don't get overcharged.",
      "Could you explain what might cause {x} in an older car? I'd like to be prepared before the garage appointment."],
     ["Is it safe to keep driving until the appointment?", "Should I ask for the old parts back?"],
     ["Describe when the noise happens: braking, turning or accelerating.", "Ask for a written estimate first.", "If the brakes are involved, do not wait."],
     ["a squealing noise", "a rattling sound", "a grinding noise when braking", "a smell of burning", "a vibration at high speed"]),
    (["I want to reorganise {x} because I can never find anything, can you suggest a system that is easy to keep up?",
      "Could you help me declutter {x}? I keep postponing it and it's getting overwhelming."],
     ["What do I do with things I'm not ready to throw away?", "How often should I repeat this?"],
     ["Start with one shelf, not the whole room.", "Keep a box for undecided items and date it.", "Group things by how often you use them."],
     ["my wardrobe", "the kitchen cupboards", "my desk", "the garage", "the kids' toys"]),
]

# Filler clauses a wordy user adds: they share vocabulary with the questions on purpose.
FILLER = [
    "Sorry for the long message, it has been a hectic week and I want to get this off my plate.",
    "I remember you helped me with something similar a while ago, so I thought I'd ask again.",
    "It's one of those things I keep putting off, and every time I think about it I get distracted.",
    "To be honest I don't have much time this week, so anything quick would be great.",
    "I asked a friend for advice but we ended up talking about something else entirely.",
    "Thanks in advance, you've been really helpful every time I've asked about things like this.",
    "I know this is a small thing but it has been bugging me for days now.",
    "My schedule is a mess right now, mornings are the only quiet time I have.",
    "I tried to find an answer online but every site says something different.",
    "I want to get it right this time, last time it took me ages to fix my mistakes.",
    "Let me know if you need more details, I can dig them out.",
    "Anyway, I'd appreciate a practical answer rather than a long theory.",
]

# Personal facts: (first mention, update or None, question, question after the update, values). The
# mention is a passing clause inside a request about something else.
FACTS = [
    ("By the way, my cat {v} walked across the keyboard twice while I was typing this.", None,
     "What is my cat called?", None, ["Miso", "Pixel", "Juniper", "Toffee", "Ozzy"]),
    ("We only moved to {v} in spring, so I still don't know the local shops well.",
     "Since we relocated to {v} last month everything is in boxes again.",
     "Which city do I live in?", "Which city do I live in now?", ["Lyon", "Porto", "Leipzig", "Gdansk", "Valencia", "Utrecht"]),
    ("My partner works as a {v}, so evenings are often quiet at home.",
     "My partner just switched careers and now works as a {v}, which changed our routine.",
     "What does my partner do for a living?", "What is my partner's job now?", ["nurse", "pilot", "sound engineer", "pharmacist", "carpenter", "translator"]),
    ("I drive an old {v}, which is probably why I worry about repairs so much.",
     "We finally sold the old car and bought a {v}, which I'm still getting used to.",
     "What car do I drive?", "What car do I have now?", ["Golf", "Corolla", "Fiat Panda", "Volvo estate", "Skoda Octavia", "Honda Jazz"]),
    ("I'm allergic to {v}, so I always have to check ingredient lists carefully.", None,
     "What food allergy do I have?", None, ["peanuts", "shellfish", "sesame", "kiwi", "hazelnuts"]),
    ("My daughter {v} starts school this year, which is why mornings are chaos.", None,
     "What is my daughter's name?", None, ["Elsa", "Noor", "Clara", "Yuki", "Amara"]),
    ("I volunteer at the {v} on Saturdays, so weekends are short for me.",
     "I stopped volunteering at the old place and now help out at the {v} instead.",
     "Where do I volunteer?", "Where do I volunteer these days?", ["animal shelter", "food bank", "community garden", "public library", "repair café"]),
]

# Recurring events for counting questions: (mention variants with {d}, question, details)
EVENTS = [
    (["I had another dentist appointment on {d}, which wrecked my afternoon.", "Also, the dentist wanted to see me again on {d}, so that's another morning gone."],
     "How many times did I mention going to the dentist?", ["Monday", "Thursday", "the 3rd", "Friday morning", "the 12th"]),
    (["We bought a new board game called {d} and played it until midnight.", "Oh, and we picked up {d}, another board game, at the weekend market."],
     "How many board games did I say we bought?", ["Azul", "Cascadia", "Wingspan", "Carcassonne", "Patchwork"]),
    (["My bike got a flat tyre again on {d} on the way to work.", "Another puncture on {d}, I'm starting to think the bike hates me."],
     "How many flat tyres did I tell you about?", ["Tuesday", "the ring road", "Wednesday", "the bridge", "a rainy Monday"]),
    (["I went to a pottery class on {d} and made a lopsided bowl.", "Another pottery session on {d}: this time the mug survived the kiln."],
     "How many pottery classes did I mention attending?", ["Sunday", "Thursday night", "the 8th", "Saturday", "a workshop day"]),
]

QUESTION_FILLER = ["", "Quick question: ", "I can't recall, ", "Remind me, "]


def _ask(rng: random.Random, question: str) -> str:
    lead = rng.choice(QUESTION_FILLER)
    return lead + (question[0].lower() + question[1:] if lead else question)


def _request(rng: random.Random, opening: str, insert: str | None = None) -> str:
    """A long, wordy request: the opening, two to four filler sentences, and optionally a passing
    detail somewhere in the middle."""
    parts = [opening] + rng.sample(FILLER, rng.randint(2, 4))
    if insert is not None:
        parts.insert(rng.randrange(1, len(parts)), insert)
    return " ".join(parts)


def _reply(rng: random.Random, sentences: list[str]) -> str:
    lines = rng.sample(sentences, len(sentences))
    return " ".join(["Happy to help."] + lines + ["Let me know how it goes and we can adjust."])


def conversation(cid: str, rng: random.Random, n_sessions: int) -> tuple[dict, list[dict]]:
    user = rng.choice(NAMES)
    base = datetime(2023, 3, 1, 9, tzinfo=timezone.utc)
    sessions = []
    for i in range(n_sessions):
        openings, follow, replies, details = TASKS[rng.randrange(len(TASKS))]
        x = rng.choice(details)
        turns = [{"speaker": user, "role": "user", "text": _request(rng, rng.choice(openings).format(x=x))},
                 {"speaker": "assistant", "role": "assistant", "text": _reply(rng, replies)}]
        for _ in range(rng.randint(1, 2)):
            turns.append({"speaker": user, "role": "user", "text": _request(rng, rng.choice(follow))})
            turns.append({"speaker": "assistant", "role": "assistant", "text": _reply(rng, replies)})
        when = base + timedelta(days=i * rng.randint(3, 6), hours=rng.randint(0, 10))
        sessions.append({"id": f"{cid}-s{i}", "date": when.isoformat(), "turns": turns})
    used: set[int] = set()

    def plant(text: str, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
        """Put ``text`` in passing into a user turn of a session in [lo, hi) not used yet."""
        free = [s for s in range(lo, hi if hi is not None else n_sessions) if s not in used]
        si = rng.choice(free)
        used.add(si)
        users = [ti for ti, t in enumerate(sessions[si]["turns"]) if t["role"] == "user"]
        ti = rng.choice(users)
        turn = sessions[si]["turns"][ti]
        sentences = turn["text"].split(". ")
        at = rng.randrange(1, len(sentences) + 1)
        turn["text"] = ". ".join(sentences[:at]) + (". " if at < len(sentences) else " ") + text + (
            " " + ". ".join(sentences[at:]) if at < len(sentences) else "")
        return si, ti

    questions = []
    for mention, update, q, q_now, values in rng.sample(FACTS, 5):
        v1, v2 = rng.sample(values, 2)
        first = plant(mention.format(v=v1), 0, n_sessions // 2)
        if update is not None and rng.random() < 0.6:
            second = plant(update.format(v=v2), n_sessions // 2 + 2)
            questions.append({"conv": cid, "question": _ask(rng, q_now), "kind": "update",
                              "evidence": [list(first), list(second)], "answer": v2})
        else:
            questions.append({"conv": cid, "question": _ask(rng, q), "kind": "fact",
                              "evidence": [list(first)], "answer": v1})
    for variants, q, details in rng.sample(EVENTS, 2):
        n = rng.randint(2, 4)
        ev = [list(plant(rng.choice(variants).format(d=d))) for d in rng.sample(details, n)]
        questions.append({"conv": cid, "question": q, "kind": "count", "evidence": ev, "answer": n})
    last = datetime.fromisoformat(sessions[-1]["date"])
    for qd in questions:
        qd["sessions"] = sorted({sessions[si]["id"] for si, _ in qd["evidence"]})
        qd["date"] = (last + timedelta(days=1)).isoformat()
    return {"id": cid, "lang": "en", "style": "long-assistant", "sessions": sessions}, questions


def generate(seed: int, users: int = 10, sessions: int = 45) -> dict:
    rng = random.Random(seed)
    convs, questions = [], []
    for n in range(users):
        c, qs = conversation(f"la-{seed}-{n}", rng, sessions)
        convs.append(c)
        questions.extend(qs)
    return {"seed": seed, "conversations": convs, "questions": questions}


def main() -> None:
    from _common import save_set

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where to write the JSON (outside the repo)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=45)
    args = ap.parse_args()
    data = generate(args.seed, args.users, args.sessions)
    save_set(data, args.out)


if __name__ == "__main__":
    main()
