"""The mixed drop-in workload: ordinary chat traffic (explanations, haiku, tips, translations, recipes,
comparisons, e-mails) drawn uniformly from a large space, so few questions repeat; a tenth of the
sessions ask for a rewrite of the first answer. Paraphrases of one question share its label."""
from __future__ import annotations

import random
from typing import ClassVar

from loadtests.workloads.base import Session, Turn

CONCEPTS = ("recursion", "photosynthesis", "inflation", "black holes", "compound interest", "machine learning",
            "the blockchain", "vaccines", "supply and demand", "quantum entanglement", "plate tectonics",
            "the stock market", "DNS", "public-key cryptography", "the greenhouse effect", "natural selection",
            "a mortgage", "an API", "the immune system", "gravity", "a neural network", "entropy",
            "the water cycle", "opportunity cost", "electric cars", "the internet", "a hash table", "jet lag",
            "meditation", "the Roman Empire")
TOPICS = ("autumn leaves", "the sea", "a rainy Monday", "coffee", "the moon", "city traffic", "a lost cat",
          "snowfall", "a mountain lake", "old friends", "spring rain", "a train journey", "the desert", "fireflies",
          "a library", "sunrise", "a thunderstorm", "the first day of school", "a lighthouse", "bread baking")
ACTIVITIES = ("learning a language", "running a marathon", "public speaking", "saving money", "sleeping better",
              "growing tomatoes", "writing a CV", "job interviews", "learning guitar", "remote work",
              "studying for exams", "cooking on a budget", "travelling light", "taking better photos",
              "staying focused", "starting a podcast", "negotiating a salary", "learning to swim")
PHRASES = ("good morning", "where is the train station", "thank you very much", "how much does this cost",
           "I would like a coffee", "see you tomorrow", "the bill, please", "I am lost", "happy birthday",
           "nice to meet you")
LANGUAGES = ("French", "Spanish", "German", "Italian", "Japanese", "Portuguese", "Dutch", "Swedish")
INGREDIENTS = ("chicken", "rice", "spinach", "chickpeas", "salmon", "mushrooms", "eggs", "tofu", "potatoes",
               "lentils", "tomatoes", "pasta", "cheese", "broccoli")
PAIRS = (("a virus", "a bacterium"), ("weather", "climate"), ("RAM", "storage"), ("stocks", "bonds"),
         ("TCP", "UDP"), ("a crocodile", "an alligator"), ("baking soda", "baking powder"), ("Python", "Java"),
         ("a debit card", "a credit card"), ("affect", "effect"), ("latitude", "longitude"), ("a hurricane", "a typhoon"))
RECIPIENTS = ("my landlord", "my manager", "a client", "my team", "my neighbour", "a professor")
SUBJECTS = ("a late payment", "taking Friday off", "a project delay", "a noisy party", "a meeting next week",
            "a deadline extension", "a broken heater", "a thank-you for their help")

TASKS = {
    "explain": (("Explain {x} in simple terms.", "Can you explain {x} simply?",
                 "Give me a beginner-friendly explanation of {x}."), lambda r: (r.choice(CONCEPTS), "")),
    "haiku": (("Write a haiku about {x}.", "Compose a haiku on {x}.", "I'd love a haiku about {x}."),
              lambda r: (r.choice(TOPICS), "")),
    "tips": (("Give me three tips for {x}.", "What are some good tips for {x}?"),
             lambda r: (r.choice(ACTIVITIES), "")),
    "translate": (("Translate '{x}' into {y}.", "How do you say '{x}' in {y}?"),
                  lambda r: (r.choice(PHRASES), r.choice(LANGUAGES))),
    "recipe": (("Suggest a quick recipe with {x} and {y}.", "What can I cook with {x} and {y}?"),
               lambda r: tuple(r.sample(INGREDIENTS, 2))),
    "compare": (("What is the difference between {x} and {y}?", "How does {x} differ from {y}?"),
                lambda r: r.choice(PAIRS)),
    "email": (("Write a short email to {x} about {y}.", "Draft a brief email to {x} regarding {y}."),
              lambda r: (r.choice(RECIPIENTS), r.choice(SUBJECTS))),
}
REWRITES = {"shorter": ("Can you make it shorter?", "Shorter, please."),
            "example": ("Give me another example.", "Can you add an example?")}
SYSTEMS = (None, "You are a helpful assistant.")


class MixedChat:
    name = "mixed"
    budget_ms = None
    reference: ClassVar[dict] = {}

    def __init__(self, seed: int = 0, max_tokens: int = 128, rewrite_share: float = 0.1) -> None:
        self.max_tokens, self.rewrite_share = max_tokens, rewrite_share

    def session(self, rng: random.Random) -> Session:
        task = rng.choice(sorted(TASKS))
        frames, slots = TASKS[task]
        x, y = slots(rng)
        label = f"{task}:{x}:{y}"
        turns = [Turn(rng.choice(frames).format(x=x, y=y), label)]
        if rng.random() < self.rewrite_share:
            kind = rng.choice(sorted(REWRITES))
            turns.append(Turn(rng.choice(REWRITES[kind]), f"{label}|{kind}"))
        params = {"max_tokens": self.max_tokens, "temperature": rng.choice((0, 0.7))}
        return Session(tuple(turns), "chat", rng.choice(SYSTEMS), params)
