"""The retail domain's state: customers, addresses, payment methods, products, orders."""

from __future__ import annotations

import random
from typing import Any, Literal

from trajforge.environments.base import State
from trajforge.schemas.base import Record

OrderStatus = Literal["pending", "processed", "shipped", "delivered", "cancelled",
                      "return requested", "exchange requested"]


class Address(Record):
    address1: str
    address2: str
    city: str
    state: str
    zip: str


class PaymentMethod(Record):
    id: str
    kind: Literal["credit_card", "paypal", "gift_card"]
    brand: str | None = None
    last_four: str | None = None
    balance: float | None = None


class Customer(Record):
    id: str
    first_name: str
    last_name: str
    email: str
    address: Address
    payment_methods: tuple[PaymentMethod, ...]
    order_ids: tuple[str, ...]

    def payment_method(self, method_id: str) -> PaymentMethod | None:
        return next((p for p in self.payment_methods if p.id == method_id), None)


class Variant(Record):
    item_id: str
    options: dict[str, str]
    price: float
    available: bool


class Product(Record):
    id: str
    name: str
    variants: tuple[Variant, ...]

    def variant(self, item_id: str) -> Variant | None:
        return next((v for v in self.variants if v.item_id == item_id), None)


class OrderItem(Record):
    item_id: str
    product_id: str
    name: str
    options: dict[str, str]
    price: float


class Payment(Record):
    kind: Literal["payment", "refund"]
    payment_method_id: str
    amount: float


class Order(Record):
    id: str
    customer_id: str
    status: OrderStatus
    placed_on: str
    items: tuple[OrderItem, ...]
    address: Address
    payment_method_id: str
    payments: tuple[Payment, ...]
    items_modified: bool = False
    cancel_reason: str | None = None
    returned_item_ids: tuple[str, ...] = ()
    exchanged_item_ids: tuple[str, ...] = ()

    def item(self, item_id: str) -> OrderItem | None:
        return next((i for i in self.items if i.item_id == item_id), None)

    def known_item(self, item_id: str) -> OrderItem:
        """The item, which the caller already knows is in this order."""
        item = self.item(item_id)
        if item is None:
            raise KeyError(f"item {item_id} is not in order {self.id}")
        return item

    @property
    def total(self) -> float:
        return round(sum(i.price for i in self.items), 2)


def address_text(a: Address | dict[str, Any]) -> str:
    """An address as one line of prose: "12 Oak St, Apt 4, Austin, TX 78701"."""
    d = a.model_dump() if isinstance(a, Address) else a
    parts = [d["address1"]] + ([d["address2"]] if d.get("address2") else []) + [f"{d['city']}, {d['state']} {d['zip']}"]
    return ", ".join(parts)


def money(value: float) -> str:
    """An amount as the agent says it: two decimals, no sign."""
    return f"{abs(value):.2f}"


class RetailState(State):
    customers: dict[str, Customer]
    products: dict[str, Product]
    orders: dict[str, Order]


# --- deterministic data builder --------------------------------------------------------------

FIRST_NAMES = ("Ava", "Liam", "Mia", "Noah", "Emma", "Omar", "Yuki", "Lucas", "Sofia", "Mateo",
               "Aisha", "Ethan", "Chloe", "Ravi", "Isabella", "Daniel", "Fatima", "Leo", "Grace",
               "Hiro", "Nora", "Samuel", "Zara", "Ivan", "Amara", "Jonas", "Priya", "Elena",
               "Kofi", "Lena", "Marco", "Ines", "Tomas", "Maya", "Arjun", "Clara", "Diego", "Hana")
LAST_NAMES = ("Garcia", "Smith", "Chen", "Patel", "Kim", "Nguyen", "Silva", "Muller", "Rossi",
              "Khan", "Lopez", "Brown", "Sato", "Cohen", "Okafor", "Novak", "Dubois", "Ahmed",
              "Larsen", "Moreau", "Santos", "Ivanova", "Hughes", "Kowalski", "Haddad", "Fischer",
              "Mensah", "Ortiz", "Berg", "Tanaka")
STREETS = ("Maple", "Oak", "Cedar", "Pine", "Elm", "Lake", "Hill", "Sunset", "River", "Park",
           "Willow", "Highland", "Forest", "Meadow", "Spring", "Church", "Mill", "Bay")
STREET_KINDS = ("St", "Ave", "Rd", "Ln", "Dr", "Blvd")
CITIES = (("Austin", "TX"), ("Denver", "CO"), ("Seattle", "WA"), ("Boston", "MA"),
          ("Phoenix", "AZ"), ("Portland", "OR"), ("Chicago", "IL"), ("Atlanta", "GA"),
          ("Columbus", "OH"), ("San Diego", "CA"), ("Nashville", "TN"), ("Raleigh", "NC"))
CARD_BRANDS = ("visa", "mastercard", "amex")

# name -> (base price, {option: values})
CATALOG: dict[str, tuple[float, dict[str, tuple[str, ...]]]] = {
    "Desk Lamp": (34.0, {"color": ("black", "white", "blue", "red"), "bulb": ("LED", "halogen")}),
    "Backpack": (59.0, {"color": ("black", "green", "grey", "navy"), "size": ("small", "large")}),
    "Water Bottle": (19.0, {"color": ("blue", "red", "silver", "green"), "capacity": ("500ml", "1L")}),
    "Headphones": (129.0, {"color": ("black", "white", "blue"), "type": ("over-ear", "on-ear")}),
    "Running Shoes": (89.0, {"color": ("black", "white", "red", "blue"), "size": ("8", "9", "10", "11")}),
    "T-Shirt": (18.0, {"color": ("white", "black", "green", "red"), "size": ("S", "M", "L", "XL")}),
    "Office Chair": (219.0, {"color": ("black", "grey"), "material": ("mesh", "leather")}),
    "Coffee Maker": (79.0, {"color": ("black", "silver"), "capacity": ("4 cups", "12 cups")}),
    "Yoga Mat": (29.0, {"color": ("purple", "blue", "green", "black"), "thickness": ("4mm", "6mm")}),
    "Bluetooth Speaker": (64.0, {"color": ("black", "red", "blue"), "battery": ("10h", "20h")}),
    "Wall Clock": (27.0, {"color": ("black", "white", "wood"), "size": ("small", "large")}),
    "Sunglasses": (49.0, {"color": ("black", "brown", "gold"), "lens": ("polarized", "standard")}),
    "Laptop Stand": (39.0, {"color": ("silver", "black"), "material": ("aluminum", "wood")}),
    "Rain Jacket": (99.0, {"color": ("yellow", "navy", "black", "green"), "size": ("S", "M", "L", "XL")}),
    "Blender": (69.0, {"color": ("black", "white", "red"), "power": ("600W", "1000W")}),
    "Smart Watch": (199.0, {"color": ("black", "silver", "rose"), "band": ("silicone", "leather")}),
    "Tent": (159.0, {"color": ("green", "orange"), "capacity": ("2-person", "4-person")}),
    "Electric Kettle": (42.0, {"color": ("white", "black", "silver"), "capacity": ("1L", "1.7L")}),
    "Wireless Mouse": (25.0, {"color": ("black", "white", "grey"), "connection": ("bluetooth", "USB")}),
    "Throw Pillow": (22.0, {"color": ("blue", "grey", "mustard", "pink"), "size": ("16in", "20in")}),
}

STATUS_WEIGHTS = (("pending", 30), ("processed", 8), ("shipped", 14), ("delivered", 36),
                  ("cancelled", 7), ("return requested", 3), ("exchange requested", 2))
MONTHS = ("01", "02", "03", "04", "05", "06", "07", "08", "09", "10")


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _address(rng: random.Random) -> Address:
    city, state = rng.choice(CITIES)
    return Address(address1=f"{rng.randint(10, 9999)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}",
                   address2=rng.choice(("", "", "", f"Apt {rng.randint(1, 40)}",
                                        f"Suite {rng.randint(100, 900)}")),
                   city=city, state=state, zip=_digits(rng, 5))


def build_products(rng: random.Random) -> dict[str, Product]:
    products: dict[str, Product] = {}
    for name, (base, options) in CATALOG.items():
        product_id = _digits(rng, 10)
        keys = list(options)
        combos: list[dict[str, str]] = [{}]
        for key in keys:
            combos = [dict(c, **{key: v}) for c in combos for v in options[key]]
        variants = tuple(
            Variant(item_id=_digits(rng, 10), options=combo,
                    price=round(base * rng.uniform(0.85, 1.2), 2), available=rng.random() < 0.8)
            for combo in combos
        )
        products[product_id] = Product(id=product_id, name=name, variants=variants)
    return products


def build_retail_state(rng: random.Random, size: int) -> RetailState:
    """``size`` customers, each with 1-3 payment methods and 1-5 orders; deterministic in rng."""
    products = build_products(rng)
    product_list = list(products.values())
    customers: dict[str, Customer] = {}
    orders: dict[str, Order] = {}
    used_ids: set[str] = set()
    statuses, weights = zip(*STATUS_WEIGHTS, strict=True)
    for _ in range(size):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        customer_id = f"{first.lower()}_{last.lower()}_{_digits(rng, 4)}"
        while customer_id in customers:
            customer_id = f"{first.lower()}_{last.lower()}_{_digits(rng, 4)}"
        address = _address(rng)
        methods: list[PaymentMethod] = []
        for kind in rng.sample(("credit_card", "paypal", "gift_card", "credit_card"), rng.randint(1, 3)):
            pm_id = f"{kind}_{_digits(rng, 7)}"
            if kind == "credit_card":
                methods.append(PaymentMethod(id=pm_id, kind=kind, brand=rng.choice(CARD_BRANDS),
                                             last_four=_digits(rng, 4)))
            elif kind == "gift_card":
                methods.append(PaymentMethod(id=pm_id, kind=kind,
                                             balance=float(rng.choice((0, 15, 40, 80, 150, 300)))))
            else:
                methods.append(PaymentMethod(id=pm_id, kind=kind))
        order_ids: list[str] = []
        for _ in range(rng.randint(1, 5)):
            order_id = f"#W{_digits(rng, 7)}"
            while order_id in used_ids:
                order_id = f"#W{_digits(rng, 7)}"
            used_ids.add(order_id)
            items = []
            for product in rng.sample(product_list, rng.randint(1, 4)):
                variant = rng.choice(product.variants)
                items.append(OrderItem(item_id=variant.item_id, product_id=product.id,
                                       name=product.name, options=variant.options,
                                       price=variant.price))
            paid_with = rng.choice([m for m in methods if m.kind != "gift_card"] or methods)
            total = round(sum(i.price for i in items), 2)
            placed_on = f"2026-{rng.choice(MONTHS)}-{rng.randint(1, 28):02d}"
            orders[order_id] = Order(
                id=order_id, customer_id=customer_id,
                status=rng.choices(statuses, weights)[0], placed_on=placed_on,
                items=tuple(items), address=address, payment_method_id=paid_with.id,
                payments=(Payment(kind="payment", payment_method_id=paid_with.id, amount=total),),
            )
            order_ids.append(order_id)
        customers[customer_id] = Customer(
            id=customer_id, first_name=first, last_name=last,
            email=f"{first.lower()}.{last.lower()}{_digits(rng, 3)}@example.com",
            address=address, payment_methods=tuple(methods), order_ids=tuple(order_ids))
    return RetailState(customers=customers, products=products, orders=orders)
