package shop;

/** The code under test: a cart total with tax, which must call withTax once per item and build no Receipt. */
public class Cart {
    private final long[] prices;

    public Cart(long... prices) {
        this.prices = prices;
    }

    public long total() {
        long t = 0;
        for (long p : prices) t += withTax(p);
        return t;
    }

    long withTax(long cents) {
        return cents + cents / 5;
    }

    /** Only for checkout: allocates a Receipt. */
    public Receipt checkout() {
        return new Receipt(total());
    }
}
