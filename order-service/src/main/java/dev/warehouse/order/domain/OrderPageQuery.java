package dev.warehouse.order.domain;

/** One page of a customer's orders: the filter, the page size, the previous page's token, and consistency. */
public record OrderPageQuery(DateFilter filter, int pageSize, String pageToken, boolean consistentRead) {}
