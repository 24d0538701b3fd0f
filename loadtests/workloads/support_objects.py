"""What customers ask about, by domain: each object has synonyms, the article it takes, and the actions
that make sense on it. Every (object, action) pair is one FAQ intent of the customer-service workload."""
from __future__ import annotations

# (synonyms, article, actions): "" as article means the synonyms read without one.
Objects = list[tuple[str, str, str]]

ACCOUNT: Objects = [
    ("password|login password|account password", "my", "reset change"),
    ("email address|e-mail address|login email", "my", "change verify"),
    ("username|user name|login name|handle", "my", "change"),
    ("phone number|mobile number|cell number|contact number", "my", "change add remove verify"),
    ("profile picture|profile photo|avatar", "my", "change remove add"),
    ("account|customer account|online account", "my", "close verify lock unlock"),
    ("personal data|personal information|stored account data", "my", "download remove view"),
    ("display name|public name|screen name", "my", "change"),
    ("language setting|display language|site language", "my", "change"),
    ("notification settings|notification preferences|alert settings", "my", "change view"),
    ("marketing emails|promotional emails|sales emails", "", "disable enable"),
    ("login history|sign-in history|record of recent logins", "my", "view download"),
    ("date of birth|birthday|birth date", "my", "change add"),
    ("saved addresses|address book|list of saved addresses", "my", "view change"),
]

BILLING: Objects = [
    ("payment method|card on file|saved card|credit card", "my", "add remove change"),
    ("billing address|invoice address|billing details", "my", "change view"),
    ("invoice|bill|receipt", "my", "download view print dispute"),
    ("charge on my statement|payment I don't recognise|transaction on my card", "a", "dispute report"),
    ("gift card|gift voucher|store gift card", "a", "apply check add"),
    ("promo code|discount code|coupon|voucher code", "a", "apply remove"),
    ("store credit|account credit|credit balance", "my", "check apply transfer"),
    ("payment plan|installment plan|pay-later plan", "a", "add cancel pay"),
    ("PayPal account|PayPal wallet|PayPal login", "my", "add remove"),
    ("tax exemption|tax-exempt status|VAT exemption", "a", "add remove"),
    ("billing history|payment history|record of past payments", "my", "view download"),
    ("outstanding balance|balance due|unpaid balance", "my", "pay check"),
    ("automatic payments|auto-pay|recurring card payments", "", "enable disable"),
    ("billing currency|payment currency|currency I pay in", "my", "change"),
]

SHIPPING: Objects = [
    ("shipping address|delivery address|mailing address|ship-to address", "my", "change add remove"),
    ("package|parcel|shipment", "my", "track report reschedule"),
    ("delivery date|delivery day|expected delivery date", "my", "change check"),
    ("shipping method|delivery option|shipping speed", "my", "change upgrade"),
    ("delivery instructions|drop-off instructions|notes for the courier", "", "add change remove"),
    ("tracking number|tracking code|tracking ID", "my", "check share"),
    ("shipping costs|delivery fees|postage rates", "your", "check"),
    ("list of shipping countries|countries you ship to|shipping destinations", "the", "check"),
    ("pickup point|parcel locker|collection point", "a", "add change"),
    ("delivery slot|delivery window|delivery time slot", "a", "schedule reschedule cancel"),
    ("delivery notifications|shipping updates|tracking alerts", "", "enable disable"),
    ("signature requirement|signature on delivery|signed-for delivery", "the", "remove add"),
    ("vacation hold|delivery hold|hold on deliveries", "a", "schedule cancel"),
    ("courier|delivery driver|carrier", "the", "contact"),
]

RETURNS: Objects = [
    ("item I bought|product I purchased|recent purchase", "an", "return exchange refund"),
    ("return label|shipping label for a return|prepaid return label", "a", "print download"),
    ("return request|open return|return case", "my", "track cancel"),
    ("return pickup|courier pickup for a return|collection of a return", "a", "schedule reschedule cancel"),
    ("refund|money back|reimbursement", "my", "track check"),
    ("damaged item|broken product|item that arrived damaged", "a", "report return exchange"),
    ("wrong item|incorrect product|item I didn't order", "a", "report return"),
    ("return policy|returns rules|return window", "your", "check"),
    ("gift I received|present someone bought me|gifted item", "a", "return exchange"),
    ("exchange request|pending exchange|swap request", "my", "track cancel"),
    ("warranty claim|warranty request|guarantee claim", "a", "track cancel submit"),
]

ORDERS: Objects = [
    ("order|purchase|online order", "my", "cancel track change view reorder split share"),
    ("separate orders|two recent orders|open orders", "my", "merge"),
    ("order history|past orders|purchase history", "my", "view download print"),
    ("order confirmation|confirmation email|order receipt", "my", "resend print"),
    ("item in my order|product in my order|article in my order", "an", "remove cancel"),
    ("gift message|gift note|personal message for the recipient", "a", "add change remove"),
    ("gift wrapping|gift wrap|present wrapping", "", "add remove"),
    ("pre-order|preorder|advance order", "my", "cancel track change"),
    ("bulk order|wholesale order|large quantity order", "a", "place cancel"),
    ("custom order|personalized order|made-to-order item", "a", "place change"),
    ("order number|order ID|order reference", "my", "check share"),
    ("phone order|order over the phone|telephone order", "a", "place"),
]

PRODUCTS: Objects = [
    ("product review|customer review|star rating", "my", "add change remove"),
    ("wishlist|wish list|saved items list|favorites list", "my", "share view remove"),
    ("size guide|size chart|sizing table", "your", "check download print"),
    ("stock alert|back-in-stock alert|restock notification", "a", "add remove change"),
    ("price alert|price drop notification|price watch", "a", "add remove"),
    ("product manual|user manual|instruction booklet", "the", "download print view"),
    ("product warranty|manufacturer warranty|guarantee on my product", "my", "check renew transfer"),
    ("gift registry|wedding registry|baby registry", "a", "add share close change"),
    ("product recommendations|personalized suggestions|recommended items", "", "disable enable change"),
    ("recently viewed items|browsing history|viewing history", "my", "remove view disable"),
    ("comparison list|compare list|side-by-side product list", "my", "view remove share"),
    ("product I bought last year|item from a past order|previous purchase", "a", "review reorder"),
]

SUBSCRIPTIONS: Objects = [
    ("subscription|membership|plan", "my", "cancel pause resume renew upgrade downgrade change transfer"),
    ("free trial|trial period|trial membership", "my", "cancel renew"),
    ("delivery frequency|delivery schedule|box shipping schedule", "my", "change pause"),
    ("next box|upcoming box|next shipment", "my", "skip reschedule"),
    ("renewal reminder|renewal notice|renewal email", "the", "enable disable"),
    ("auto-renewal|automatic renewal|automatic plan renewal", "", "enable disable"),
    ("family plan member|household member|extra member on my plan", "a", "add remove"),
    ("newsletter|weekly newsletter|email newsletter", "the", "join leave"),
    ("loyalty program|rewards program|points club", "the", "join leave"),
    ("reward points|loyalty points|bonus points", "my", "check apply transfer"),
    ("student discount|student pricing|education discount", "the", "apply verify"),
    ("gift subscription|subscription gift|gifted membership", "a", "apply cancel"),
    ("billing cycle|billing date|renewal date", "my", "change check"),
]

SECURITY: Objects = [
    ("two-factor authentication|2FA|two-step verification|login verification", "", "enable disable reset"),
    ("security questions|security answers|account recovery questions", "my", "change reset"),
    ("suspicious activity|unusual login|strange account activity", "", "report check"),
    ("phishing email|scam email|fake message claiming to be from you", "a", "report"),
    ("trusted devices|remembered devices|saved devices", "my", "remove view"),
    ("active sessions|logged-in devices|open sessions", "my", "view close"),
    ("recovery email|backup email|recovery address", "a", "add change verify"),
    ("app password|application password|device password", "an", "add remove"),
    ("login alerts|sign-in notifications|new login alerts", "", "enable disable"),
    ("passkey|security key|hardware key", "a", "add remove"),
    ("hacked account|compromised account|account someone broke into", "a", "report unlock"),
    ("PIN|account PIN|security PIN|phone PIN", "my", "reset change"),
    ("data breach notice|security alert email|breach notification", "a", "verify report"),
    ("privacy settings|privacy options|data sharing settings", "my", "change view"),
    ("connected apps|third-party apps|linked apps", "my", "remove view"),
]

STORE_INFO: Objects = [
    ("opening hours|store hours|business hours|hours of operation", "your", "check"),
    ("holiday hours|holiday schedule|festive opening times", "your", "check"),
    ("nearest store|closest shop|store near me", "the", "check"),
    ("customer service|support team|help desk", "", "contact"),
    ("support hotline|customer phone line|phone support", "your", "check use"),
    ("live chat|chat support|online chat", "", "use"),
    ("parking|car park|parking options", "the", "check"),
    ("in-store pickup|click and collect|store pickup", "", "use schedule cancel"),
    ("store events|in-store workshops|events calendar", "", "check join"),
    ("price match|price matching|price guarantee", "your", "use check"),
    ("accessibility services|wheelchair access|accessibility options", "your", "check"),
    ("in-store appointment|personal shopping appointment|fitting appointment", "an", "schedule reschedule cancel"),
    ("store manager|manager on duty|branch manager", "the", "contact"),
    ("job openings|careers page|open positions", "your", "check"),
    ("head office|corporate office|company headquarters", "your", "contact check"),
    ("complaint|formal complaint|grievance", "a", "submit track"),
    ("repair|repair appointment|repair job", "a", "schedule track cancel"),
    ("store Wi-Fi|in-store Wi-Fi|guest Wi-Fi", "the", "use"),
]

DOMAINS: dict[str, Objects] = {
    "account": ACCOUNT, "billing": BILLING, "shipping": SHIPPING, "returns": RETURNS, "orders": ORDERS,
    "products": PRODUCTS, "subscriptions": SUBSCRIPTIONS, "security": SECURITY, "store-info": STORE_INFO,
}
