package dev.warehouse.inventory.domain;

/** Which page of a list to read: its size, the token of the previous page (empty for the first), and consistency. */
public record PageQuery(int pageSize, String pageToken, boolean consistentRead) {}
