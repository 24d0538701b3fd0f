"""How customers word support questions: action synonyms, question frames (each paraphrase of an
intent uses a different frame), problem frames, and the context-dependent follow-ups of a conversation."""
from __future__ import annotations

# action: (synonyms separated by "|", the article an object takes with it, or None for the object's own)
ACTIONS: dict[str, tuple[str, str | None]] = {
    "change": ("change|update|modify|edit", None),
    "reset": ("reset|recover|restore", None),
    "add": ("add|set up|create|register", "a"),
    "remove": ("remove|delete|get rid of|erase", None),
    "cancel": ("cancel|call off|stop|withdraw", None),
    "track": ("track|follow|check the status of|trace", None),
    "return": ("return|send back|ship back|mail back", None),
    "exchange": ("exchange|swap|trade in|replace", None),
    "refund": ("get a refund for|get my money back for|be reimbursed for", None),
    "view": ("view|see|find|look at", None),
    "download": ("download|get a copy of|export|save a copy of", None),
    "print": ("print|print out|get a printed copy of", None),
    "pause": ("pause|put on hold|suspend|freeze", None),
    "resume": ("resume|restart|reactivate|unpause", None),
    "upgrade": ("upgrade|move up|bump up", None),
    "downgrade": ("downgrade|scale down|step down", None),
    "renew": ("renew|extend|prolong", None),
    "verify": ("verify|confirm|validate", None),
    "enable": ("enable|turn on|activate|switch on", None),
    "disable": ("disable|turn off|deactivate|switch off", None),
    "transfer": ("transfer|move|hand over", None),
    "merge": ("merge|combine|join together", None),
    "split": ("split|divide|break up", None),
    "dispute": ("dispute|contest|challenge|query", None),
    "apply": ("apply|use|redeem", None),
    "check": ("check|look up|find out|see", None),
    "contact": ("contact|reach|get in touch with|talk to", None),
    "report": ("report|flag|let you know about", None),
    "schedule": ("schedule|book|arrange|set up", "a"),
    "reschedule": ("reschedule|move|change the date of|postpone", None),
    "share": ("share|send|forward", None),
    "place": ("place|make|submit|put in", "a"),
    "reorder": ("reorder|buy again|order again|repeat", None),
    "resend": ("resend|send again|get another copy of", None),
    "review": ("review|rate|leave feedback on|write a review of", None),
    "close": ("close|shut down|terminate|end", None),
    "lock": ("lock|block|secure", None),
    "unlock": ("unlock|unblock|regain access to", None),
    "pay": ("pay|settle|pay off|clear", None),
    "skip": ("skip|pass on|sit out", None),
    "join": ("sign up for|subscribe to|join|enroll in", None),
    "leave": ("unsubscribe from|opt out of|leave|quit", None),
    "use": ("use|access|make use of", None),
    "submit": ("submit|file|lodge|send in", "a"),
}

# "{a}" is the action with its object ("reset my password"); every frame reads as a whole question.
HOWTO_FRAMES = (
    "How do I {a}?",
    "How can I {a}?",
    "What's the best way to {a}?",
    "I need to {a}. What should I do?",
    "Can you help me {a}?",
    "Is it possible to {a} online?",
    "Where do I go to {a}?",
    "I'd like to {a}, what are the steps?",
    "What are the steps to {a}?",
    "Please explain how to {a}.",
    "how to {a}",
    "Hi there, quick question: how would I {a}?",
    "I want to {a} - how does that work?",
    "Could you tell me how I can {a}?",
    "Any idea how to {a}?",
    "Walk me through how to {a}, please.",
)

# "{p}" is a problem statement ("I was charged twice").
PROBLEM_FRAMES = (
    "{p}. What should I do?",
    "{p} - can you help?",
    "Hi, {p}. How do I fix this?",
    "{p}. What are my options?",
    "Help, {p}!",
    "{p}, what now?",
    "So {p}. Can you sort this out?",
    "{p}. Is there anything you can do?",
    "I have a problem: {p}.",
    "Not sure what to do - {p}.",
    "Hello. {p}. Please advise.",
    "{p} and I need this resolved.",
)

# Follow-ups whose right answer depends on the conversation's earlier turn.
FOLLOW_UPS: dict[str, tuple[str, ...]] = {
    "duration": ("How long does that take?", "How long will that take?",
                 "How much time does that usually take?", "What's the usual turnaround for that?"),
    "cost": ("Does that cost anything?", "Is there a fee for that?", "Will I be charged for that?",
             "Is that free?"),
    "app": ("Can I do that in the mobile app?", "Does that work from the app too?",
            "Can I do it on my phone?"),
    "confirm": ("Will I get a confirmation?", "How will I know it worked?",
                "Do I get an email when it's done?"),
    "undo": ("Can I undo that later?", "What if I change my mind?", "Is that reversible?"),
    "fail": ("What if that doesn't work?", "And if it still doesn't work?",
             "What should I do if that fails?"),
}

SYSTEM_PROMPT = (
    "You are Ava, the customer support assistant of Northwind Outfitters, an online clothing and "
    "outdoor gear store. Be friendly and precise. Answer the customer's question in one or two short "
    "sentences, and point to the right page of the website or app when there is one."
)


def with_article(article: str, noun: str) -> str:
    """`a` becomes `an` before a vowel sound; other determiners pass through."""
    if not article:
        return noun
    if article == "a" and starts_with_vowel_sound(noun):
        article = "an"
    return f"{article} {noun}"


def starts_with_vowel_sound(noun: str) -> bool:
    first = noun[:1].lower()
    if first == "u":
        return not noun.lower().startswith(("us", "uni", "use"))
    return first in "aeio"
