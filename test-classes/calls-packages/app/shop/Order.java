package app.shop;

import app.shop.internal.Tax;

public class Order {
    private final int id;
    private final long cents;

    public Order(int id, long cents) {
        this.id = id;
        this.cents = cents;
    }

    public long totalWithTax() {
        return cents + Tax.of(cents) + id * 0L;
    }
}
