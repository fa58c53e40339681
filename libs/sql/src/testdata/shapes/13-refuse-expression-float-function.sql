select sqrt(sum(score)) from t
